// Our `shutdown`, run as the built binary against the protocol tests' Envoy, the way docs/reference.md's
// idle-connection advice says to run it: live listener counts, idle connections ignored after a
// short minimum drain and quiet period.
import { join } from 'node:path';
import { cleanEnv, type RunningCli, startCli, tempDir } from '../cli.js';
import type { ProtocolsEnvoy } from './protocols-envoy.js';

const MIN_DRAIN_S = 1;
const QUIET_PERIOD_S = 1;
/** Far beyond what any row needs: a drain that reaches it failed the row. */
const DRAIN_TIMEOUT_S = 15;
/** The bound for a drain with only idle connections left: minimum drain + quiet period + 1 s. */
export const IDLE_DRAIN_BOUND_MS = (MIN_DRAIN_S + QUIET_PERIOD_S + 1) * 1_000;

export function startShutdown(envoy: ProtocolsEnvoy, defer: (cleanup: () => unknown) => void): RunningCli & { exited(): boolean } {
  const dir = tempDir();
  defer(dir.cleanup);
  const args = [
    'shutdown',
    '--admin-address',
    envoy.target.adminAddress,
    '--ready-file',
    join(dir.path, 'ready'),
    '--connections',
    'listeners',
    '--ignore-idle-connections',
    '--min-drain-duration',
    `${MIN_DRAIN_S}s`,
    '--quiet-period',
    `${QUIET_PERIOD_S}s`,
    '--drain-timeout',
    `${DRAIN_TIMEOUT_S}s`,
    '--check-interval',
    '100ms',
  ];
  const cli = startCli(args, cleanEnv());
  let exited = false;
  void cli.result.then(
    () => (exited = true),
    () => (exited = true),
  );
  defer(() => {
    cli.child.kill('SIGKILL');
    return cli.result.catch(() => undefined);
  });
  return { ...cli, exited: () => exited };
}

/**
 * Resolves once the drain is past its minimum and its quiet period: from here on, only what our
 * drain counts as busy holds it.
 */
export async function pastQuietPeriod(cli: RunningCli): Promise<void> {
  await cli.waitForLog((line) => line.msg === 'minimum drain period reached');
  await cli.waitForLog((line) => line.msg === 'quiet period reached: no new connections');
}

/** When the drain began: the tap saw `POST /drain_listeners` (Date.now()). */
export function drainStartedAt(envoy: ProtocolsEnvoy): number {
  const call = envoy.target.calls.find((c) => c.path === '/drain_listeners');
  if (call === undefined) throw new Error('no POST /drain_listeners was made');
  return call.time;
}
