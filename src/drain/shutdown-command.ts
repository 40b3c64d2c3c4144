// `envoy-shutdown-manager shutdown`: the drain as one call, from a validated config to an exit code.

import { withEnvoy } from '../envoy/envoy-control.js';
import { createSocketWatch, DEFAULT_SOCKET_COUNTS_DIR } from '../envoy/socket-watch.js';
import type { DrainResult } from '../handoff/drain-result.js';
import { type DrainInProgress, removeDrainState, writeDrainState } from '../handoff/drain-state.js';
import { waitForEnvoyPrestop } from '../handoff/envoy-prestop.js';
import { checkReadyFileDirectory, checkReadyFileReplaceable, removeReadyFile, writeReadyFile } from '../handoff/ready-file.js';
import { formatDuration } from '../shared/duration.js';
import { ExitCode, errorMessage, exitCodeFor, UsageError } from '../shared/errors.js';
import type { Logger } from '../shared/log.js';
import { ownIdentity } from '../shared/process-identity.js';
import { runDrain } from './drain.js';
import { describeShutdownConfig, drainOptions, envoyConnection, type ShutdownConfig } from './drain-config.js';

const EXIT_CODES: Readonly<Record<DrainResult, ExitCode>> = {
  drained: ExitCode.Drained,
  timeout: ExitCode.Timeout,
  'envoy-unreachable': ExitCode.EnvoyUnreachable,
};

/** How a run ended, for its last log line: every run has one, failures included. */
interface Ended {
  readonly result: DrainResult | 'interrupted' | 'not-terminating' | 'ready-file-failed' | 'error';
  readonly exitCode: ExitCode;
  readonly fields?: Record<string, unknown>;
}

/**
 * Runs the drain and logs one `shutdown finished` line with its exit code, whatever happens. A
 * usage error found before any request to Envoy is thrown instead (one line on stderr, exit 2).
 */
export async function runShutdown(config: ShutdownConfig, log: Logger, signal: AbortSignal): Promise<ExitCode> {
  const startedAt = Date.now();
  let ended: Ended;
  try {
    ended = await shutdown(config, log, signal, startedAt);
  } catch (error) {
    if (error instanceof UsageError) throw error;
    ended = { result: 'error', exitCode: exitCodeFor(error), fields: { err: errorMessage(error) } };
    log.error({ err: errorMessage(error) }, 'shutdown failed');
  }
  const { connections, elapsedMs = Date.now() - startedAt, ...rest } = ended.fields ?? {};
  const summary = { result: ended.result, ...(connections === undefined ? {} : { connections }), elapsedMs, exitCode: ended.exitCode, ...rest };
  if (ended.exitCode === ExitCode.Drained || ended.exitCode === ExitCode.Timeout) log.info(summary, 'shutdown finished');
  else log.error(summary, 'shutdown finished');
  return ended.exitCode;
}

async function shutdown(config: ShutdownConfig, log: Logger, signal: AbortSignal, startedAt: number): Promise<Ended> {
  const { readyFile } = config;
  // Sidecar-less: no file to signal through, nor to keep the drain state beside.
  if (readyFile === undefined) return drainAndReport(config, log, signal);
  // Before touching Envoy: a drain whose end cannot be signalled would hold Envoy until the
  // manager's timeout, and a path that holds someone else's file must not be replaced.
  await checkReadyFileDirectory(readyFile);
  checkReadyFileReplaceable(readyFile);
  const self = ownIdentity();
  const drainState = (phase: DrainInProgress['phase']): DrainInProgress => ({
    pid: self.pid,
    ...(self.startTime === undefined ? {} : { pidStartTime: self.startTime }),
    startedAt: new Date(startedAt).toISOString(),
    startedBy: config.startedBy,
    phase,
    minDrainMs: config.minDrainDuration,
    drainTimeoutMs: config.drainTimeout,
    quietPeriodMs: config.quietPeriod,
  });
  // The drain-state file lives until the ready file is written: the manager reads "neither file"
  // as "no drain running", and must never see that between the two.
  try {
    if (config.requireEnvoyPrestop) {
      writeDrainState(readyFile, drainState('awaiting-envoy-prestop'));
      const verdict = await awaitTermination(readyFile, config, startedAt, log, signal);
      if (verdict === 'interrupted') return { result: 'interrupted', exitCode: ExitCode.Interrupted };
      if (verdict === 'not-terminating') return { result: 'not-terminating', exitCode: ExitCode.Success };
    }
    if (removeReadyFile(readyFile)) {
      log.info({ readyFile }, 'removed the ready file of an earlier drain');
    }
    writeDrainState(readyFile, drainState('draining'));
    return await drainAndReport(config, log, signal);
  } finally {
    // Logged, never thrown: it must not hide how the drain itself ended.
    await removeDrainState(readyFile).catch((error: unknown) => log.warn({ err: errorMessage(error) }, 'could not remove the drain-in-progress file'));
  }
}

async function drainAndReport(config: ShutdownConfig, log: Logger, signal: AbortSignal): Promise<Ended> {
  log.info(describeShutdownConfig(config), 'shutdown started');
  // The live listener gauges follow each close at once, so a hint of one is worth a read; a `total` gauge waits for a flush.
  const sockets = config.connections === 'listeners' ? createSocketWatch(config.socketCountsDir ?? DEFAULT_SOCKET_COUNTS_DIR) : undefined;
  const outcome = await withEnvoy(envoyConnection(config), config.quietPeriod > 0 ? 'required' : 'no', (envoy) =>
    runDrain(drainOptions(config), { envoy, log, signal, ...(sockets === undefined ? {} : { sockets }) }),
  );
  if (outcome.result === 'interrupted') {
    log.warn(
      { connections: outcome.connections, elapsedMs: outcome.elapsedMs },
      'interrupted: no ready file written; Envoy may be left failing health checks and draining (POST /healthcheck/ok undoes the health check)',
    );
    return { result: 'interrupted', exitCode: ExitCode.Interrupted, fields: { connections: outcome.connections } };
  }
  const exitCode = EXIT_CODES[outcome.result];
  const report = { ...outcome, result: outcome.result, exitCode, finishedAt: new Date().toISOString() };
  if (config.readyFile !== undefined) {
    try {
      writeReadyFile(config.readyFile, report);
    } catch (error) {
      log.error({ err: errorMessage(error), readyFile: config.readyFile }, "could not write the ready file: Envoy's preStop hook waits until its own timeout");
      return { result: 'ready-file-failed', exitCode: exitCodeFor(error), fields: { drain: outcome.result, connections: outcome.connections } };
    }
  }
  return {
    result: outcome.result,
    exitCode,
    fields: { connections: outcome.connections, elapsedMs: outcome.elapsedMs, finishedAt: report.finishedAt, readyFile: config.readyFile ?? 'none' },
  };
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
    seenAt = await waitForEnvoyPrestop(readyFile, startedAt, config.envoyPrestopWait, signal);
  } catch {
    log.warn('interrupted while waiting for envoy preStop hook: nothing was sent to Envoy');
    return 'interrupted';
  }
  if (seenAt === undefined) {
    log.warn(
      { waitedMs: Date.now() - startedAt, envoyPrestopWait: formatDuration(config.envoyPrestopWait) },
      "no sign of Envoy's preStop hook: the pod is not terminating (a sidecar restart?), so Envoy is left serving, health check untouched",
    );
    return 'not-terminating';
  }
  log.info({ envoyPrestopAt: new Date(seenAt).toISOString() }, "envoy's preStop hook reached the manager: the pod is terminating");
  return 'terminating';
}
