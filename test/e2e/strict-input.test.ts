// Bad input is refused with one line and exit 2 before any request to Envoy: nothing is guessed,
// trimmed, replaced or silently ignored.
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanEnv, startCli, tempDir } from '../support/cli.js';
import type { DrainTarget } from '../support/real-envoy/drain-target.js';
import { realEnvoyAndReadyFile } from '../support/real-envoy/drain-target.js';

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A command that must end by itself; killed after the test if it does not (a manager that started after all). */
function started(args: string[], env = cleanEnv()): ReturnType<typeof startCli> {
  const cli = startCli(args, env);
  cleanups.push(() => {
    cli.child.kill('SIGKILL');
    return cli.result.catch(() => undefined);
  });
  return cli;
}

async function refused(args: string[], env: Record<string, string> = {}): Promise<{ stderr: string; envoy: DrainTarget; ready: string }> {
  const { envoy, ready } = await realEnvoyAndReadyFile((cleanup) => cleanups.push(cleanup));
  const filled = args.map((arg) => arg.replace('$ADMIN', envoy.adminAddress).replace('$READY', ready));
  const result = await started(filled, cleanEnv(env)).result;
  expect(result.code, result.stderr + result.stdout).toBe(2);
  expect(result.stderr.trimEnd().split('\n'), result.stderr).toHaveLength(1);
  expect(envoy.calls).toEqual([]);
  return { stderr: result.stderr, envoy, ready };
}

const SHUTDOWN = ['shutdown', '--admin-address', '$ADMIN', '--ready-file', '$READY', '--min-drain-duration', '0s'];

describe('strict input', () => {
  it.each(
    [
      [['--drain-timeout', ' 10s'], /" 10s" is not a duration/],
      [['--drain-timeout', '10s\n'], /"10s\\n" is not a duration/],
      [['--check-interval', '1s '], /"1s " is not a duration/],
      [['--exit-at-connections', ' 1'], /" 1" is not a whole number/],
      [['--connections', 'listeners '], /"listeners " is not a connection source/],
      [['--admin-address', '[127.0.0.1]:19000'], /brackets are for IPv6 addresses only/],
      [['--admin-address', 'http://127.0.0.1:19000/#top'], /give only scheme, host and port/],
      [['--admin-address', 'http://127.0.0.1:19000#'], /give only scheme, host and port/],
      [['--admin-address', ' 127.0.0.1:19000'], /leading or trailing white space/],
      [['--ready-file', `/tmp/${'r'.repeat(240)}`], /file name must be at most 219 bytes/],
      [['--ready-file', `/tmp/${'d'.repeat(256)}/ready`], /every directory name at most 255/],
      [['--ready-file', `/${'long-directory-name/'.repeat(210)}ready`], /ready file path is too long/],
      [['--ready-file', '/tmp/x', '--no-ready-file'], /--ready-file and --no-ready-file contradict each other/],
      [['--no-ready-file', '--ready-file', '/tmp/x'], /--ready-file and --no-ready-file contradict each other/],
      [['--ignore-listener', 'stats'], /--ignore-listener does nothing here: it only applies to --connections listeners or a --quiet-period/],
      [['--output', 'json'], /--output only applies to --dry-run/],
      [['--envoy-prestop-wait', '5s'], /--envoy-prestop-wait only applies to --require-envoy-prestop/],
    ].map(([extra, message]) => ({
      extra: extra as string[],
      message: message as RegExp,
      name: JSON.stringify(extra).replace(/(\w)\1{20,}/g, (run) => `${run[0]}×${run.length}`),
    })),
  )('shutdown $name: exit 2, one line, nothing sent to Envoy', async ({ extra, message }) => {
    const { stderr } = await refused([...SHUTDOWN, ...extra]);
    expect(stderr).toMatch(message);
  });

  it.each([
    ['ENVOY_SHUTDOWN_REQUIRE_ENVOY_PRESTOP', '', /"" is not a boolean/],
    ['ENVOY_SHUTDOWN_REQUIRE_ENVOY_PRESTOP', 'true ', /"true " is not a boolean/],
    ['ENVOY_SHUTDOWN_DRAIN_TIMEOUT', '60s\n', /is not a duration/],
  ])('shutdown with %s=%j: exit 2, one line', async (name, value, message) => {
    const { stderr } = await refused(SHUTDOWN, { [name]: value });
    expect(stderr).toMatch(message);
    expect(stderr).toContain(name);
  });

  it.each([
    ['ENVOY_SHUTDOWN_DRAIN_ENDPOINT', /ENVOY_SHUTDOWN_DRAIN_ENDPOINT.*"" is not a boolean/],
    ['ENVOY_SHUTDOWN_DRAIN_TIMEOUT', /ENVOY_SHUTDOWN_DRAIN_TIMEOUT: empty duration/],
    ['ENVOY_SHUTDOWN_HOOK_TOKEN', /ENVOY_SHUTDOWN_HOOK_TOKEN: the hook token must be at least 16 characters/],
  ])('an empty %s stops the manager at start', async (name, message) => {
    const dir = tempDir();
    cleanups.push(dir.cleanup);
    const result = await started(['shutdown-manager', '--port', '0', '--ready-file', join(dir.path, 'ready')], cleanEnv({ [name]: '' })).result;
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
  });

  it('--ignore-listener from the environment with --connections total is one warning line, not silence', async () => {
    const { envoy, ready } = await realEnvoyAndReadyFile((cleanup) => cleanups.push(cleanup));
    const result = await started(
      ['shutdown', '--admin-address', envoy.adminAddress, '--ready-file', ready, '--min-drain-duration', '0s'],
      cleanEnv({ ENVOY_SHUTDOWN_IGNORE_LISTENERS: 'stats' }),
    ).result;
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('warning: ENVOY_SHUTDOWN_IGNORE_LISTENERS is ignored: it only applies to --connections listeners or a --quiet-period\n');
  });

  describe('a --ready-file path that holds something this tool did not write is refused, never replaced', () => {
    it.each([
      ['a config file', (path: string) => writeFileSync(path, 'listen 80;\n')],
      ['an empty file', (path: string) => writeFileSync(path, '')],
      ['a directory', (path: string) => mkdirSync(path)],
      [
        'a symlink to a ready report',
        (path: string) => {
          writeFileSync(`${path}.real`, JSON.stringify({ result: 'drained', elapsedMs: 1 }));
          symlinkSync(`${path}.real`, path);
        },
      ],
    ])('shutdown, with %s there', async (_what, place) => {
      const dir = tempDir();
      cleanups.push(dir.cleanup);
      const path = join(dir.path, 'ready');
      place(path);
      const { stderr } = await refused([...SHUTDOWN.slice(0, 3), '--ready-file', path]);
      expect(stderr).toMatch(/not a ready file this tool wrote: refusing to replace it/);
      expect(existsSync(path)).toBe(true);
    });

    it('shutdown, with a device there', async () => {
      const { stderr } = await refused([...SHUTDOWN.slice(0, 3), '--ready-file', '/dev/null']);
      expect(stderr).toMatch(/\/dev\/null is a device, socket or pipe, not a ready file this tool wrote/);
    });

    it('shutdown-manager, with a config file there', async () => {
      const dir = tempDir();
      cleanups.push(dir.cleanup);
      const path = join(dir.path, 'ready');
      writeFileSync(path, 'listen 80;\n');
      const result = await started(['shutdown-manager', '--port', '0', '--ready-file', path]).result;
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(/not a ready file this tool wrote: refusing to replace it/);
      expect(readFileSync(path, 'utf8')).toBe('listen 80;\n');
    });
  });
});
