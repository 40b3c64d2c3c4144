// `install`: a self-contained copy that runs in any container, laid out atomically.
import { spawnSync } from 'node:child_process';
import { appendFileSync, copyFileSync, existsSync, lstatSync, mkdirSync, readdirSync, readlinkSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BIN, cleanEnv, startCli, tempDir } from '../support/cli.js';
import { SINGLE_EXECUTABLE } from '../support/envoy-pod.js';
import { startDrainTarget } from '../support/real-envoy/drain-target.js';

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function dir(): string {
  const made = tempDir('install-');
  cleanups.push(made.cleanup);
  return made.path;
}

function install(target: string, extra: string[] = [], executable = SINGLE_EXECUTABLE): ReturnType<typeof spawnSync> & { stdout: string; stderr: string } {
  return spawnSync(executable, ['install', target, ...extra], { encoding: 'utf8', env: {} });
}

/** Runs `script` as root in a private mount namespace (for a tiny or read-only tmpfs). */
function inMountNamespace(script: string): { status: number | null; stdout: string; stderr: string } {
  return spawnSync('unshare', ['-m', 'sh', '-ec', script], { encoding: 'utf8' });
}

const LIBRARIES = ['ld-linux-x86-64.so.2', 'libc.so.6', 'libdl.so.2', 'libgcc_s.so.1', 'libm.so.6', 'libpthread.so.0', 'libstdc++.so.6'];

describe('install', () => {
  it('lays out the executable, its loader and exactly its libraries, runnable by any UID, and prints the hook command', () => {
    const target = join(dir(), 'esm');
    mkdirSync(target);
    const result = install(target, ['--mount-path', '/esm']);
    expect(result.status).toBe(0);
    const version = readlinkSync(join(target, 'current'));
    expect(version).toMatch(/^v-\d+\.\d+\.\d+.*-[0-9a-f]{12}$/);
    expect(readdirSync(target).sort()).toEqual(['current', version]);
    expect(readdirSync(join(target, version)).sort()).toEqual(['envoy-shutdown-manager', 'lib']);
    expect(readdirSync(join(target, version, 'lib')).sort()).toEqual(LIBRARIES);
    const mode = (path: string): string => (statSync(join(target, version, path)).mode & 0o777).toString(8);
    expect([mode('.'), mode('lib'), mode('envoy-shutdown-manager'), mode('lib/ld-linux-x86-64.so.2'), mode('lib/libc.so.6')]).toEqual([
      '755',
      '755',
      '755',
      '755',
      '644',
    ]);
    expect(statSync(join(target, version, 'envoy-shutdown-manager')).size).toBe(statSync(SINGLE_EXECUTABLE).size);
    const lines = result.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^installed envoy-shutdown-manager .* the executable, ld-linux-x86-64\.so\.2 and 6 libraries/);
    expect(lines[1]).toMatch(/^verified: .* --version printed \d+\.\d+\.\d+/);
    expect(JSON.parse(lines.at(-1) ?? '')).toEqual([
      '/esm/current/lib/ld-linux-x86-64.so.2',
      '--library-path',
      '/esm/current/lib',
      '/esm/current/envoy-shutdown-manager',
      'shutdown',
    ]);
  });

  it('is safe to run again: keeps a good copy, removes older versions and leftovers of an interrupted run', () => {
    const target = dir();
    expect(install(target).status).toBe(0);
    const first = readlinkSync(join(target, 'current'));
    mkdirSync(join(target, 'v-0.0.1-000000000000'));
    mkdirSync(join(target, '.staging-abc123'));
    writeFileSync(join(target, '.current-999'), '');
    const again = install(target);
    expect(again.status).toBe(0);
    expect(readlinkSync(join(target, 'current'))).toBe(first);
    expect(readdirSync(target).sort()).toEqual(['current', first]);
  });

  it('never leaves a half-copied directory: out of space, the previous good copy stays current', () => {
    const target = dir();
    // A different executable (same program, one byte appended) needs a second 105 MB copy.
    const other = join(dir(), 'envoy-shutdown-manager');
    copyFileSync(SINGLE_EXECUTABLE, other);
    appendFileSync(other, '\n');
    const result = inMountNamespace(`
      mount -t tmpfs -o size=160m tmpfs ${target}
      ${SINGLE_EXECUTABLE} install ${target} > /dev/null
      first=$(readlink ${target}/current)
      set +e; ${other} install ${target}; echo "exit=$?"; set -e
      echo "current=$(readlink ${target}/current) first=$first"
      ls -a ${target}
      ${target}/current/lib/ld-linux-x86-64.so.2 --library-path ${target}/current/lib ${target}/current/envoy-shutdown-manager --version`);
    expect(result.stderr).toBe('');
    expect(result.stdout).toMatch(/error: install into .* failed: no space left \(the copy needs about 110 MB/);
    expect(result.stdout).toMatch(/^exit=1$/m);
    const [, current, first] = /^current=(\S+) first=(\S+)$/m.exec(result.stdout) ?? [];
    expect(current).toBe(first);
    const listing = result.stdout.split('\n').filter((line) => /^(\.|\.\.|current|v-\S+|\.staging-\S+|\.current-\S+)$/.test(line));
    expect(listing.sort()).toEqual(['.', '..', 'current', first].sort());
    expect(result.stdout.trim().split('\n').at(-1)).toMatch(/^\d+\.\d+\.\d+/);
  });

  it.each([
    ['a missing directory', (d: string) => join(d, 'missing'), /^error: install directory .*missing does not exist/],
    [
      'a file',
      (d: string) => {
        writeFileSync(join(d, 'file'), '');
        return join(d, 'file');
      },
      /does not exist/,
    ],
  ])('exits 2 for %s', (_what, make, message) => {
    const result = install(make(dir()));
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(message);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('exits 2 for a read-only directory', () => {
    const target = dir();
    const result = inMountNamespace(`mount -t tmpfs -o ro tmpfs ${target}; ${SINGLE_EXECUTABLE} install ${target} || echo "exit=$?"`);
    expect(result.stderr).toMatch(/^error: install directory .* is not writable \(EROFS\)/);
    expect(result.stdout).toMatch(/exit=2/);
  });

  it('exits 2 for a directory this user may not write', () => {
    const target = dir(); // root-owned, mode 0700 from mkdtemp
    const result = spawnSync('setpriv', ['--reuid=65532', '--regid=65532', '--clear-groups', SINGLE_EXECUTABLE, 'install', target], {
      encoding: 'utf8',
      env: {},
    });
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(/is not writable \(EACCES\)/);
  });

  it('exits 2 when not run from the single executable', async () => {
    const result = await startCli(['install', dir()], cleanEnv()).result;
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/install copies the single executable/);
    expect(BIN).toMatch(/bin\/envoy-shutdown-manager$/);
  });

  it('runs from an empty root as a non-root UID with an empty environment, and drains Envoy', async () => {
    const root = dir();
    // chroot --userspec needs every directory on the way readable by that UID.
    spawnSync('chmod', ['755', root]);
    mkdirSync(join(root, 'esm'));
    expect(install(join(root, 'esm'), ['--mount-path', '/esm']).status).toBe(0);
    expect(readdirSync(root)).toEqual(['esm']); // nothing else: no shell, no libc, no /proc, no /dev
    const envoy = await startDrainTarget();
    cleanups.push(() => envoy.close());
    const command = ['/esm/current/lib/ld-linux-x86-64.so.2', '--library-path', '/esm/current/lib', '/esm/current/envoy-shutdown-manager'];
    const cli = startCli(
      [
        '--userspec=65532:65532',
        root,
        ...command,
        'shutdown',
        '--no-ready-file',
        '--admin-address',
        envoy.adminAddress,
        '--connections',
        'listeners',
        '--min-drain-duration',
        '200ms',
        '--drain-timeout',
        '5s',
        '--check-interval',
        '100ms',
      ],
      {},
      ['/usr/sbin/chroot'],
    );
    const result = await cli.result;
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(envoy.calls.map((c) => c.path).slice(0, 2)).toEqual(['/healthcheck/fail', '/drain_listeners']);
    expect(result.logs.at(-1)).toMatchObject({ msg: 'shutdown finished', result: 'drained', readyFile: 'none' });
    expect(existsSync(join(root, 'tmp'))).toBe(false);
    expect(lstatSync(join(root, 'esm', 'current')).isSymbolicLink()).toBe(true);
  });
});
