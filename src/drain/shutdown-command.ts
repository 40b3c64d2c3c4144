// `envoy-shutdown-manager shutdown`: the drain as one call, from a validated config to an exit code.
import type { ShutdownConfig } from '../config.js';
import { formatDuration } from '../duration.js';
import { createAdminClient } from '../envoy/admin-client.js';
import { formatAdminAddress } from '../envoy/address.js';
import { createEnvoyControl } from '../envoy/envoy-control.js';
import { ExitCode, errorMessage } from '../errors.js';
import type { Logger } from '../log.js';
import { checkReadyFileDirectory, removeReadyFile, writeReadyFile, type DrainResult } from '../ready-file.js';
import { type DrainOutcome, runDrain } from './drain.js';
import { removeDrainState, writeDrainState } from '../drain-state.js';

const EXIT_CODES: Readonly<Record<DrainResult, ExitCode>> = {
  drained: ExitCode.Drained,
  timeout: ExitCode.Timeout,
  'envoy-unreachable': ExitCode.EnvoyUnreachable,
};

export async function runShutdown(config: ShutdownConfig, log: Logger, signal: AbortSignal): Promise<ExitCode> {
  // Before touching Envoy: a drain whose end cannot be signalled would hold Envoy until the manager's timeout.
  await checkReadyFileDirectory(config.readyFile);
  if (removeReadyFile(config.readyFile)) {
    log.info({ readyFile: config.readyFile }, 'removed the ready file of an earlier drain');
  }
  log.info(describeShutdownConfig(config), 'shutdown started');

  const admin = await createAdminClient({ address: config.adminAddress, timeoutMs: config.adminTimeoutMs });
  const envoy = createEnvoyControl(admin, { source: config.connections, ignoreListeners: config.ignoreListeners, countAccepted: config.quietPeriodMs > 0 });
  let outcome: DrainOutcome;
  try {
    await writeDrainState(config.readyFile, {
      pid: process.pid,
      startedAt: new Date().toISOString(),
      startedBy: config.startedBy,
      minDrainMs: config.minDrainMs,
      drainTimeoutMs: config.drainTimeoutMs,
      quietPeriodMs: config.quietPeriodMs,
    });
    outcome = await runDrain(config, { envoy, log, signal });
  } finally {
    await admin.close();
    await removeDrainState(config.readyFile);
  }

  if (outcome.result === 'interrupted') {
    log.warn(
      { connections: outcome.connections, elapsedMs: outcome.elapsedMs },
      'interrupted: no ready file written; Envoy may be left failing health checks and draining (POST /healthcheck/ok undoes the health check)',
    );
    return ExitCode.Interrupted;
  }
  const exitCode = EXIT_CODES[outcome.result];
  const report = { ...outcome, result: outcome.result, exitCode, finishedAt: new Date().toISOString() };
  try {
    await writeReadyFile(config.readyFile, report);
  } catch (error) {
    log.error({ err: errorMessage(error), readyFile: config.readyFile }, "could not write the ready file: Envoy's preStop hook waits until its own timeout");
    return ExitCode.ReadyFileFailed;
  }
  log.info({ ...report, readyFile: config.readyFile }, 'shutdown finished');
  return exitCode;
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
    connections: config.connections,
    ignoreListeners: [...config.ignoreListeners],
    readyFile: config.readyFile,
    adminTimeout: formatDuration(config.adminTimeoutMs),
  };
}
