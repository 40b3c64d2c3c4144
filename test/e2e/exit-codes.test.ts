// Exit codes mean what the README says: one mapping from failure to code, a summary line on every
// run, and an unexpected failure never passed off as "Envoy unreachable".
import { chmodSync, copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ExitCode } from '../../src/shared/errors.js';
import { signalExitCode } from '../../src/shared/signals.js';
import { cleanEnv, runCli, startCli } from '../support/cli.js';
import { SINGLE_EXECUTABLE } from '../support/envoy-pod.js';
import { idleHttp1 } from '../support/protocols/clients.js';
import { realEnvoyAndReadyFile } from '../support/real-envoy/drain-target.js';
import { waitFor } from '../support/traffic/pod-conditions.js';

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Root writes anywhere: run as another user so that a directory mode can refuse the command. */
function asAnotherUser(): { uid?: number; gid?: number } {
  return process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : {};
}

/**
 * The command another user can run: the checkout may sit in a directory only root can enter
 * (a mktemp -d clone is 0700), so as root the single executable is copied somewhere world-readable.
 */
function commandForAnotherUser(): readonly string[] | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const dir = mkdtempSync(join(tmpdir(), 'esm-other-user-'));
  chmodSync(dir, 0o755);
  const copy = join(dir, 'envoy-shutdown-manager');
  copyFileSync(SINGLE_EXECUTABLE, copy);
  chmodSync(copy, 0o755);
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return [copy];
}

const sorted = (codes: Iterable<number>): number[] => [...new Set(codes)].sort((a, b) => a - b);
/** Every code `shutdown` can end with: the mapping's, and a second SIGTERM's. */
const SHUTDOWN_CODES = sorted([...Object.values(ExitCode), signalExitCode('SIGTERM')]);

describe('exit codes', () => {
  it("the operations page's shutdown table lists exactly the codes the code has", () => {
    const page = readFileSync('docs/operations.md', 'utf8');
    const section = page.slice(page.indexOf('## Exit codes of `shutdown`'), page.indexOf('## Troubleshoot'));
    const table = [...section.matchAll(/^\| (\d+) \|/gm)].map((match) => Number(match[1]));
    expect(sorted(table)).toEqual(SHUTDOWN_CODES);
  });

  it('shutdown --help lists exactly the codes the code has', async () => {
    const help = await runCli(['shutdown', '--help']);
    const listed = [...help.stdout.slice(help.stdout.indexOf('Exit codes:')).matchAll(/^ {2}(\d{1,3}) {2,}/gm)].map((match) => Number(match[1]));
    expect(sorted(listed)).toEqual(SHUTDOWN_CODES);
  });

  it('an unexpected failure mid-run (EACCES on the ready-file directory) exits 5 with a summary line, not 1', async () => {
    const { envoy, ready } = await realEnvoyAndReadyFile((cleanup) => cleanups.push(cleanup));
    const dir = join(ready, '..');
    chmodSync(dir, 0o777);
    cleanups.push(() => chmodSync(dir, 0o700));
    const args = ['shutdown', '--admin-address', envoy.adminAddress, '--ready-file', ready, '--require-envoy-prestop', '--envoy-prestop-wait', '30s'];
    const cli = startCli(args, cleanEnv(), commandForAnotherUser(), asAnotherUser());
    cleanups.push(() => {
      cli.child.kill('SIGKILL');
      return cli.result.catch(() => undefined);
    });
    // The hook checked the directory and waits for the envoy-prestop record; then the directory turns read-only.
    await waitFor('the hook waiting for envoy preStop', () => existsSync(`${ready}.draining`));
    chmodSync(dir, 0o555);
    writeFileSync(`${ready}.envoy-prestop`, JSON.stringify({ at: new Date().toISOString() }));
    const result = await cli.result;
    expect(result.code).toBe(5);
    expect(result.logs.find((l) => l.msg === 'shutdown failed')?.err).toMatch(/EACCES/);
    expect(result.logs.at(-1)).toMatchObject({ msg: 'shutdown finished', result: 'error', exitCode: 5 });
    expect(envoy.calls).toEqual([]);
  });

  it('a ready file that cannot be written exits 4, and the summary line says so', async () => {
    const { envoy, ready } = await realEnvoyAndReadyFile((cleanup) => cleanups.push(cleanup));
    const dir = join(ready, '..');
    chmodSync(dir, 0o777);
    cleanups.push(() => chmodSync(dir, 0o700));
    const held = await idleHttp1(envoy.listenerPort('ingress'));
    cleanups.push(() => held.close());
    const args = [
      'shutdown',
      '--admin-address',
      envoy.adminAddress,
      '--ready-file',
      ready,
      '--connections',
      'listeners',
      '--ignore-listener',
      'stats',
      '--ignore-listener',
      'ready',
      '--min-drain-duration',
      '0s',
      '--check-interval',
      '100ms',
    ];
    const cli = startCli(args, cleanEnv(), commandForAnotherUser(), asAnotherUser());
    cleanups.push(() => {
      cli.child.kill('SIGKILL');
      return cli.result.catch(() => undefined);
    });
    // The held connection keeps the drain going until the directory has turned read-only.
    await cli.waitForLog((l) => l.msg === 'draining' && l.connections === 1);
    chmodSync(dir, 0o555);
    await held.close();
    const result = await cli.result;
    expect(result.code).toBe(4);
    expect(result.logs.at(-1)).toMatchObject({ msg: 'shutdown finished', result: 'ready-file-failed', drain: 'drained', exitCode: 4 });
    expect(existsSync(ready)).toBe(false);
  });
});
