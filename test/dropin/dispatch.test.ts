// The name decides the personality, for the single executable and for `bin/` run by node, both
// called through a link: the peers' other commands exit 2 with one line, their bad flags exit 1
// as theirs do, and under its own name the executable is our CLI, unchanged.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const dir = mkdtempSync(join(tmpdir(), 'esm-names-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const TARGETS = { executable: resolve('dist/envoy-shutdown-manager'), 'node bin': resolve('bin/envoy-shutdown-manager') };

function linked(target: string, name: string): string {
  const sub = mkdtempSync(join(dir, 'l-'));
  symlinkSync(target, join(sub, name));
  return join(sub, name);
}

function run(path: string, args: readonly string[]): { code: number | null; stdout: string; stderr: string } {
  const result = spawnSync(path, args, { encoding: 'utf8', timeout: 20_000, env: { PATH: process.env.PATH ?? '' } });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe.each(Object.entries(TARGETS))('called by name (%s)', (_kind, target) => {
  it.each([
    ['envoy-gateway', ['server']],
    ['envoy-gateway', ['version']],
    ['envoy-gateway', ['certgen']],
    ['contour', ['serve', '--incluster']],
    ['contour', ['bootstrap', '/config/envoy.json']],
    ['contour', ['gateway-provisioner']],
  ])('%s %j exits 2 with one line naming the project', (name, args) => {
    const result = run(linked(target, name), args);
    expect(result.code).toBe(2);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toMatch(/is not available: this image is envoy-shutdown-manager and provides only (Envoy Gateway|Contour)'s shutdown manager/);
  });

  it.each([
    ['envoy-gateway', ['envoy', 'shutdown', '--admin-address=127.0.0.1:19000'], 'unknown flag: --admin-address'],
    ['envoy-gateway', ['envoy', 'shutdown-manager', '--ready-timeout=70'], 'invalid argument "70" for --ready-timeout'],
    ['envoy-gateway', ['envoy', 'drain'], 'unknown command "drain"'],
    ['contour', ['envoy', 'shutdown', '--drain-timeout=60s'], 'unknown flag: --drain-timeout'],
    ['contour', ['envoy', 'shutdown', '--log-format=xml'], '--log-format must be text or json'],
    ['contour', ['envoy', 'shutdown-manager', '--serve-port=http'], 'invalid argument "http" for --serve-port'],
  ])('%s %j exits 1, as the peer does on a bad command line', (name, args, message) => {
    const result = run(linked(target, name), args);
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 1, stderr: expect.stringContaining(message) as string });
  });

  it('help lists only the shutdown-manager commands and exits 0', () => {
    const result = run(linked(target, 'envoy-gateway'), ['--help']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('envoy-gateway envoy shutdown-manager');
    expect(result.stdout).toContain('envoy-gateway envoy shutdown ');
  });

  it('under any other name it is our own CLI', () => {
    const result = run(linked(target, 'esm'), ['shutdown', '--drain-timeout=0s']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--drain-timeout');
  });
});
