// `envoy-shutdown-manager shutdown`: the drain as one call, from a validated config to an exit code.
import type { ShutdownConfig } from '../config.js';
import { formatDuration } from '../duration.js';
import { formatAdminAddress } from '../envoy/address.js';
import { withEnvoy } from '../envoy/envoy-control.js';
import { ExitCode, errorMessage } from '../errors.js';
import type { Logger } from '../log.js';
import { checkReadyFileDirectory, removeReadyFile, writeReadyFile, type DrainResult } from '../ready-file.js';
import { runDrain } from './drain.js';
import { removeDrainState, writeDrainState, type DrainInProgress } from '../drain-state.js';
import { waitForEnvoyPrestop } from '../envoy-prestop.js';
import { ownIdentity } from '../process-identity.js';

const EXIT_CODES: Readonly<Record<DrainResult, ExitCode>> = {
  drained: ExitCode.Drained,
  timeout: ExitCode.Timeout,
  'envoy-unreachable': ExitCode.EnvoyUnreachable,
};

export async function runShutdown(config: ShutdownConfig, log: Logger, signal: AbortSignal): Promise<ExitCode> {
  const { readyFile } = config;
  // Sidecar-less: no file to signal through, nor to keep the drain state beside.
  if (readyFile === undefined) return drainAndReport(config, log, signal);
  const startedAt = Date.now();
  // Before touching Envoy: a drain whose end cannot be signalled would hold Envoy until the manager's timeout.
  await checkReadyFileDirectory(readyFile);
  const self = ownIdentity();
  const drainState = (phase: DrainInProgress['phase']): DrainInProgress => ({
    pid: self.pid,
    ...(self.startTime === undefined ? {} : { pidStartTime: self.startTime }),
    startedAt: new Date(startedAt).toISOString(),
    startedBy: config.startedBy,
    phase,
    minDrainMs: config.minDrainMs,
    drainTimeoutMs: config.drainTimeoutMs,
    quietPeriodMs: config.quietPeriodMs,
  });
  // The drain-state file lives until the ready file is written: the manager reads "neither file"
  // as "no drain running", and must never see that between the two.
  try {
    if (config.requireEnvoyPrestop) {
      await writeDrainState(readyFile, drainState('awaiting-envoy-prestop'));
      const verdict = await awaitTermination(readyFile, config, startedAt, log, signal);
      if (verdict !== 'terminating') return verdict === 'interrupted' ? ExitCode.Interrupted : ExitCode.Drained;
    }
    if (removeReadyFile(readyFile)) {
      log.info({ readyFile }, 'removed the ready file of an earlier drain');
    }
    await writeDrainState(readyFile, drainState('draining'));
    return await drainAndReport(config, log, signal);
  } finally {
    await removeDrainState(readyFile);
  }
}

async function drainAndReport(config: ShutdownConfig, log: Logger, signal: AbortSignal): Promise<ExitCode> {
  log.info(describeShutdownConfig(config), 'shutdown started');
  const outcome = await withEnvoy(config, config.quietPeriodMs > 0 ? 'required' : 'no', (envoy) => runDrain(config, { envoy, log, signal }));
  if (outcome.result === 'interrupted') {
    log.warn(
      { connections: outcome.connections, elapsedMs: outcome.elapsedMs },
      'interrupted: no ready file written; Envoy may be left failing health checks and draining (POST /healthcheck/ok undoes the health check)',
    );
    return ExitCode.Interrupted;
  }
  const exitCode = EXIT_CODES[outcome.result];
  const report = { ...outcome, result: outcome.result, exitCode, finishedAt: new Date().toISOString() };
  if (config.readyFile !== undefined) {
    try {
      await writeReadyFile(config.readyFile, report);
    } catch (error) {
      log.error({ err: errorMessage(error), readyFile: config.readyFile }, "could not write the ready file: Envoy's preStop hook waits until its own timeout");
      return ExitCode.ReadyFileFailed;
    }
  }
  log.info({ ...report, readyFile: config.readyFile ?? 'none' }, 'shutdown finished');
  return exitCode;
}

/**
 * Run as a hook, drain only when Envoy's own preStop hook reached the manager: otherwise this is a
 * restart of the sidecar alone (a failed liveness probe), and draining would leave a live pod
 * failing its health checks for good.
 */
async function awaitTermination(
  readyFile: string,
  config: ShutdownConfig,
  startedAt: number,
  log: Logger,
  signal: AbortSignal,
): Promise<'terminating' | 'not-terminating' | 'interrupted'> {
  let seenAt: number | undefined;
  try {
    seenAt = await waitForEnvoyPrestop(readyFile, startedAt, config.envoyPrestopWaitMs, signal);
  } catch {
    log.warn('interrupted while waiting for envoy preStop hook: nothing was sent to Envoy');
    return 'interrupted';
  }
  if (seenAt === undefined) {
    log.warn(
      { waitedMs: Date.now() - startedAt, envoyPrestopWait: formatDuration(config.envoyPrestopWaitMs) },
      "no sign of Envoy's preStop hook: the pod is not terminating (a sidecar restart?), so Envoy is left serving, health check untouched",
    );
    return 'not-terminating';
  }
  log.info({ envoyPrestopAt: new Date(seenAt).toISOString() }, "envoy's preStop hook reached the manager: the pod is terminating");
  return 'terminating';
}

/** The effective configuration as a person would write it: for the start-up log line and --dry-run. */
export function describeShutdownConfig(config: ShutdownConfig): Record<string, string | number | string[]> {
  return {
    adminAddress: formatAdminAddress(config.adminAddress),
    drainTimeout: formatDuration(config.drainTimeoutMs),
    minDrainDuration: formatDuration(config.minDrainMs),
    exitAtConnections: config.exitAtConnections,
    checkInterval: formatDuration(config.checkIntervalMs),
    healthCheckFailureDelay: formatDuration(config.healthCheckFailureDelayMs),
    quietPeriod: formatDuration(config.quietPeriodMs),
    ignoreIdleConnections: String(config.ignoreIdleConnections),
    connections: config.connections,
    ignoreListeners: [...config.ignoreListeners],
    readyFile: config.readyFile ?? 'none',
    adminTimeout: formatDuration(config.adminTimeoutMs),
    requireEnvoyPrestop: String(config.requireEnvoyPrestop),
    envoyPrestopWait: formatDuration(config.envoyPrestopWaitMs),
  };
}
