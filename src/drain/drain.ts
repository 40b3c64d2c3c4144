// The drain sequence: fail Envoy's health check, start a graceful drain, then read the connection
// count until the policy says the drain is over. Only I/O and timing live here; every decision
// is made by the pure functions in policy.ts.
import { setTimeout as sleep } from 'node:timers/promises';
import type { EnvoyControl } from '../envoy/envoy-control.js';
import type { ConnectionSource } from '../envoy/stats.js';
import { isEnvoyGone } from '../envoy/admin-client.js';
import { AdminError, errorMessage } from '../shared/errors.js';
import type { Logger } from '../shared/log.js';
import type { DrainResult } from './result.js';
import { countToDecideOn, inFlight, liveConnections, requestsReceived } from './count.js';
import {
  type DrainPolicy,
  decideDrain,
  earliestFinishMs,
  envoyGone,
  newConnectionsBetween,
  nextReadDelay,
  readTimeoutMs,
  startGiveUpMs,
  startRetryDelayMs,
} from './policy.js';

export interface DrainOptions extends DrainPolicy {
  /** 0: fail the health check first. Above 0: drain first, fail the health check after this delay unless the drain is over. */
  readonly healthCheckFailureDelayMs: number;
  /** Bound on each admin call. */
  readonly adminTimeoutMs: number;
  readonly connections: ConnectionSource;
  /** Once the drain may end, count only connections with a request in flight (needs a quiet period). */
  readonly ignoreIdleConnections: boolean;
}

export interface DrainOutcome {
  readonly result: DrainResult | 'interrupted';
  /** The count the drain ended on; null when unknown (the last read failed, or none succeeded). */
  readonly connections: number | null;
  readonly elapsedMs: number;
}

export interface DrainDeps {
  readonly envoy: EnvoyControl;
  readonly log: Logger;
  /** Aborted by SIGINT/SIGTERM: stop at the next await and report `interrupted`. */
  readonly signal: AbortSignal;
  readonly now?: () => number;
}

export async function runDrain(options: DrainOptions, deps: DrainDeps): Promise<DrainOutcome> {
  const { envoy, log, signal } = deps;
  const now = deps.now ?? Date.now;
  // The drain's clock starts when Envoy has answered the first call that changes it (the health
  // check failure, or the drain itself when that comes first): Envoy never fails its health check
  // for less than the minimum drain, however slow that call or its retries were.
  let startedAt = now();
  const elapsed = (): number => now() - startedAt;
  let clockStarted = false;
  const startClock = (): void => {
    if (!clockStarted) startedAt = now();
    clockStarted = true;
  };
  let lastCount: number | null = null;
  const outcome = (result: DrainOutcome['result']): DrainOutcome => ({ result, connections: lastCount, elapsedMs: Math.round(elapsed()) });

  const failHealthCheckFirst = options.healthCheckFailureDelayMs === 0;
  const startBy = { at: startedAt + startGiveUpMs(options.adminTimeoutMs), now };
  try {
    if (failHealthCheckFirst) {
      await withRetries('fail health check', (s, t) => envoy.failHealthCheck(s, t), log, signal, startBy);
      startClock();
      log.info('health check failed: Envoy reports itself unhealthy');
    }
    await withRetries('start graceful drain', (s, t) => envoy.startGracefulDrain(s, t), log, signal, startBy);
    startClock();
  } catch (error) {
    if (signal.aborted) return outcome('interrupted');
    log.error({ err: errorMessage(error), elapsedMs: Math.round(elapsed()) }, 'envoy admin API unreachable or misbehaving: no drain started');
    return outcome('envoy-unreachable');
  }
  log.info({ elapsedMs: Math.round(elapsed()) }, 'graceful drain started');

  const lateHealthCheck = failHealthCheckFirst ? undefined : scheduleLateHealthCheck(options.healthCheckFailureDelayMs - elapsed(), options.adminTimeoutMs, envoy, log);
  try {
    return await pollUntilDrained(options, deps, elapsed, (count) => (lastCount = count), outcome);
  } finally {
    await lateHealthCheck?.cancel();
  }
}

async function pollUntilDrained(
  options: DrainOptions,
  { envoy, log, signal }: DrainDeps,
  elapsed: () => number,
  remember: (count: number | null) => void,
  outcome: (result: DrainOutcome['result']) => DrainOutcome,
): Promise<DrainOutcome> {
  const quietPeriodOn = options.quietPeriodMs > 0;
  let refusedReads = 0;
  let minimumLogged = false;
  let quietReachedLogged = false;
  let lastProgressAt = -Infinity;
  let idleLogged = false;
  let flushWaitLogged = false;
  let lastNewConnectionMs = 0;
  let accepted: number | undefined;
  let requests: number | undefined;
  let flushBaselineS: number | undefined;
  if (quietPeriodOn) log.info({ quietPeriodMs: options.quietPeriodMs }, 'quiet period started');
  for (;;) {
    let connections: number | undefined;
    /** While the total gauge is older than the drain: the most it and the live gauges say; never decided on. */
    let unconfirmed: number | undefined;
    try {
      const reading = await envoy.readConnections(signal, readTimeoutMs(options, elapsed(), options.adminTimeoutMs));
      refusedReads = 0;
      flushBaselineS ??= reading.uptimeS;
      if (quietPeriodOn) {
        const freshConnections = reading.accepted === undefined ? 0 : newConnectionsBetween(accepted, reading.accepted);
        accepted = reading.accepted ?? accepted;
        const received = options.ignoreIdleConnections ? requestsReceived(reading) : undefined;
        const freshRequests = received === undefined ? 0 : newConnectionsBetween(requests, received);
        requests = received ?? requests;
        if (freshConnections > 0 || freshRequests > 0) {
          lastNewConnectionMs = elapsed();
          quietReachedLogged = false;
          const fields = { newConnections: freshConnections, ...(options.ignoreIdleConnections ? { newRequests: freshRequests } : {}), elapsedMs: Math.round(lastNewConnectionMs) };
          log.info(fields, freshConnections > 0 ? 'new connections arrived: quiet period restarted' : 'new requests arrived: quiet period restarted');
        }
      }
      const idleIgnored = options.ignoreIdleConnections && elapsed() >= earliestFinishMs(options, lastNewConnectionMs);
      connections = countToDecideOn(reading, { source: options.connections, flushBaselineS, idleIgnored });
      if (idleIgnored && !idleLogged) {
        log.info({ connections: reading.connections, inFlight: inFlight(reading) ?? null, elapsedMs: Math.round(elapsed()) }, 'no request for the quiet period: counting only connections with a request in flight');
        idleLogged = true;
      }
      if (connections === undefined && reading.uptimeS !== undefined) {
        unconfirmed = Math.max(reading.connections, liveConnections(reading));
        if (!flushWaitLogged) {
          log.info({ totalConnections: reading.connections, uptimeS: reading.uptimeS, elapsedMs: Math.round(elapsed()) }, 'waiting for a stats flush after the drain began: server.total_connections is older');
          flushWaitLogged = true;
        }
      }
      // Reported (progress line, a timeout's ready file) as what is known: at least `unconfirmed`.
      remember(connections ?? unconfirmed ?? null);
    } catch (error) {
      if (signal.aborted) return outcome('interrupted');
      // Unknown is not zero: the drain goes on, and can now end only at its timeout or a later good read.
      remember(null);
      refusedReads = isEnvoyGone(error) ? refusedReads + 1 : 0;
      const fields = { err: errorMessage(error), elapsedMs: Math.round(elapsed()) };
      if (envoyGone(refusedReads)) {
        log.error({ ...fields, refusedReads }, 'envoy is gone: its admin API refuses or drops every connection, so its connections are closed too');
        return outcome('envoy-unreachable');
      }
      if (refusedReads > 0) log.warn({ ...fields, refusedReads }, 'could not reach envoy: checking whether it exited');
      else log.warn(fields, 'connection count unknown: still waiting (unknown is not zero)');
    }
    const now = { elapsedMs: elapsed(), connections, lastNewConnectionMs, refusedReads };
    const fields = { connections, elapsedMs: Math.round(now.elapsedMs) };
    if (!minimumLogged && now.elapsedMs >= options.minDrainMs) {
      log.info(fields, 'minimum drain period reached');
      minimumLogged = true;
    }
    if (quietPeriodOn && !quietReachedLogged && now.elapsedMs >= lastNewConnectionMs + options.quietPeriodMs) {
      log.info({ ...fields, quietForMs: Math.round(now.elapsedMs - lastNewConnectionMs) }, 'quiet period reached: no new connections');
      quietReachedLogged = true;
    }
    const decision = decideDrain(options, now);
    if (decision === 'drained') {
      log.info(fields, 'drain completed');
      return outcome('drained');
    }
    if (decision === 'timeout') {
      log.warn({ ...fields, connections: connections ?? null }, 'drain timeout exceeded');
      return outcome('timeout');
    }
    if (connections !== undefined || unconfirmed !== undefined) {
      // One progress line per check interval; the faster end-game reads only at debug level.
      if (now.elapsedMs - lastProgressAt >= options.checkIntervalMs) {
        log.info(connections === undefined ? { ...fields, connections: unconfirmed, statsFlushPending: true } : fields, 'draining');
        lastProgressAt = now.elapsedMs;
      } else {
        log.debug(fields, 'connections read');
      }
    }
    try {
      await sleep(nextReadDelay(options, { ...now, elapsedMs: elapsed() }), undefined, { signal });
    } catch {
      return outcome('interrupted');
    }
  }
}

/**
 * Retries transient failures with a short backoff until `by.at`; a permanent one (a 4xx) ends at
 * once. Each attempt is cut at `by.at`, so the bound holds even when Envoy accepts and never answers.
 */
async function withRetries(
  what: string,
  action: (signal: AbortSignal, timeoutMs: number) => Promise<void>,
  log: Logger,
  signal: AbortSignal,
  by: { readonly at: number; readonly now: () => number },
): Promise<void> {
  for (let attempt = 1; ; attempt += 1) {
    const left = by.at - by.now();
    if (left <= 0) throw new AdminError('ESM_ADMIN_TIMEOUT', `could not ${what}: no time left to start the drain`, false);
    try {
      await action(signal, left);
      return;
    } catch (error) {
      const permanent = error instanceof AdminError && error.permanent;
      const delayMs = startRetryDelayMs(attempt);
      if (signal.aborted || permanent || by.now() + delayMs >= by.at) throw error;
      log.warn({ err: errorMessage(error), attempt, retryInMs: delayMs }, `could not ${what}, retrying`);
      await sleep(delayMs, undefined, { signal });
    }
  }
}

/** Fails the health check after `delayMs` unless cancelled first (the drain ended). */
function scheduleLateHealthCheck(delayMs: number, adminTimeoutMs: number, envoy: EnvoyControl, log: Logger): { cancel(): Promise<void> } {
  const controller = new AbortController();
  let inFlight: Promise<void> | undefined;
  const timer = setTimeout(() => {
    const by = { at: Date.now() + startGiveUpMs(adminTimeoutMs), now: Date.now };
    inFlight = withRetries('fail health check', (s, t) => envoy.failHealthCheck(s, t), log, controller.signal, by).then(
      () => log.info('health check failed after the configured delay'),
      (error: unknown) => {
        if (!controller.signal.aborted) log.error({ err: errorMessage(error) }, 'could not fail health check');
      },
    );
  }, Math.max(0, delayMs));
  return {
    async cancel() {
      clearTimeout(timer);
      if (inFlight === undefined) {
        log.info('drain ended before the health check failure delay: health check left passing');
        return;
      }
      controller.abort();
      await inFlight;
    },
  };
}
