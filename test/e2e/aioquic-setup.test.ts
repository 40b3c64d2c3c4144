// test/setup/aioquic.mjs installs only the pinned wheels: run offline against a local wheel directory
// (pip's own PIP_NO_INDEX / PIP_FIND_LINKS) with a throw-away cache (XDG_CACHE_HOME), it refuses a
// wheel that is not the one pinned with one line naming the package and version, and leaves no
// environment behind.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir } from '../support/cli.js';

const AIOQUIC_WHEEL = 'aioquic-1.7.2-cp311-abi3-manylinux2014_x86_64.manylinux_2_17_x86_64.manylinux_2_28_x86_64.whl';

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

describe('test/setup/aioquic.mjs', () => {
  it('refuses a wheel whose sha256 is not the pinned one, in one line, and leaves no environment behind', () => {
    const dir = tempDir('aioquic-setup-');
    cleanups.push(dir.cleanup);
    const wheels = join(dir.path, 'wheels');
    mkdirSync(wheels);
    writeFileSync(join(wheels, AIOQUIC_WHEEL), 'not the wheel PyPI served');
    const cache = join(dir.path, 'cache');
    const env = { ...process.env, PIP_NO_INDEX: '1', PIP_FIND_LINKS: wheels, XDG_CACHE_HOME: cache };
    const run = spawnSync(process.execPath, [resolve('test/setup/aioquic.mjs')], { env, encoding: 'utf8', timeout: 120_000 });
    expect(run.status).toBe(1);
    expect(run.stdout).toBe('');
    const lines = run.stderr.trim().split('\n');
    expect(lines[0]).toMatch(/^installing aioquic==1\.7\.2 .*pinned by sha256/);
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatch(/^cannot provide aioquic==1\.7\.2: .*pip download failed: .*Expected sha256 4f85133486a7f397.*Got +[0-9a-f]{64}/);
    expect(existsSync(join(cache, 'esm-aioquic')) ? readdirSync(join(cache, 'esm-aioquic')) : []).toEqual([]);
  });
});
