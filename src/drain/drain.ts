// The drain sequence: fail Envoy's health check, start a graceful drain, then read the connection
// count until the policy says the drain is over. Only I/O and timing live here; every decision
// is made by the pure functions in progress.ts and policy.ts.
import { setTimeout as sleep } from 'node:timers/promises';
import type { EnvoyControl } from '../envoy/envoy-control.js';
import type { ConnectionSource } from '../envoy/stats.js';
import { type SocketCounts, fewerSockets } from '../envoy/socket-count.js';
import type { SocketWatch } from '../envoy/socket-watch.js';
import { isEnvoyGone } from '../envoy/admin-client.js';
import { AdminError, errorMessage } from '../shared/errors.js';
import type { Logger } from '../shared/log.js';
import type { DrainResult } from '../handoff/drain-result.js';
import { type DrainPolicy, hintPollMs, hintWanted, nextReadDelay, readTimeoutMs, startGiveUpMs, startRetryDelayMs } from './policy.js';
import { INITIAL_STATE, decide, observe, type DrainLogLine, type Reading } from './progress.js';
import { NO_FLUSHES, flushWindowStartMs, noteRead } from './flush-timing.js';

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
  /** Drained: when a read first saw the count at or under --exit-at-connections, the last connection closed by then. */
  readonly lastConnectionMs?: number;
}

export interface DrainDeps {
  readonly envoy: EnvoyControl;
  readonly log: Logger;
  /** Aborted by SIGINT/SIGTERM: stop at the next await and report `interrupted`. */
  readonly signal: AbortSignal;
  /** With `--connections listeners`: the kernel's TCP socket count, a hint of when to read in the end game. */
  readonly sockets?: SocketWatch;
}

/**
 * Why a read happens, logged at debug level with each: the first one, the regular cadence, the
 * hint's safety net running out, the socket count dropping, the hint turning itself off, or (with
 * `total`) a wait for the next stats flush that was longer than the cadence.
 */
type ReadTrigger = 'first' | 'cadence' | 'safety-net' | 'hint' | 'hint-off' | 'flush';

export async function runDrain(options: DrainOptions, deps: DrainDeps): Promise<DrainOutcome> {
  const { envoy, log, signal } = deps;
  const now = Date.now;
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
  let settledAt: number | undefined;
  const remember = (count: number | null): void => {
    lastCount = count;
    if (count === null || count > options.exitAtConnections) settledAt = undefined;
    else settledAt ??= elapsed();
  };
  const outcome = (result: DrainOutcome['result']): DrainOutcome => ({
    result,
    connections: lastCount,
    elapsedMs: Math.round(elapsed()),
    ...(result === 'drained' && settledAt !== undefined ? { lastConnectionMs: Math.round(settledAt) } : {}),
  });

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
    return await pollUntilDrained(options, deps, elapsed, remember, outcome);
  } finally {
    await lateHealthCheck?.cancel();
  }
}

async function pollUntilDrained(
  options: DrainOptions,
  { envoy, log, signal, sockets }: DrainDeps,
  elapsed: () => number,
  remember: (count: number | null) => void,
  outcome: (result: DrainOutcome['result']) => DrainOutcome,
): Promise<DrainOutcome> {
  const say = (events: readonly DrainLogLine[]): void => {
    for (const { level, fields, msg } of events) log[level](fields, msg);
  };
  if (options.quietPeriodMs > 0) log.info({ quietPeriodMs: options.quietPeriodMs }, 'quiet period started');
  let state = INITIAL_STATE;
  let trigger: ReadTrigger = 'first';
  // The socket count as last seen while the hint watched: a drop below it, even during the read that follows, is caught.
  let baseline: SocketCounts | undefined;
  let saidOff = false;
  // With `total`, when reads saw server.uptime move: the end game's reads are timed to the stats
  // flushes. Not when idle connections are ignored: that end game counts live gauges, not the flush.
  const timeFlushes = options.connections === 'total' && !options.ignoreIdleConnections;
  let flushes = NO_FLUSHES;
  for (;;) {
    const startMs = elapsed();
    log.debug({ trigger, elapsedMs: Math.round(startMs) }, 'reading connections');
    let reading: Reading;
    try {
      const counts = await envoy.readConnections(signal, readTimeoutMs(options, elapsed(), options.adminTimeoutMs));
      reading = { elapsedMs: elapsed(), counts };
      if (timeFlushes && counts.uptimeS !== undefined) flushes = noteRead(flushes, { startMs, endMs: reading.elapsedMs, uptimeS: counts.uptimeS });
    } catch (error) {
      if (signal.aborted) return outcome('interrupted');
      reading = { elapsedMs: elapsed(), failed: errorMessage(error), refused: isEnvoyGone(error) };
    }
    state = observe(options, state, reading);
    remember(state.lastCount);
    say(state.events);
    const elapsedMs = elapsed();
    const decided = decide(options, state, elapsedMs);
    state = decided.state;
    say(state.events);
    if (decided.decision.kind === 'done') return outcome(decided.decision.reason);
    const now = { elapsedMs: elapsed(), connections: state.connections, lastNewConnectionMs: state.lastNewConnectionMs, refusedReads: state.refusedReads };
    const watch = options.connections === 'listeners' && hintWanted(options, now) ? sockets : undefined;
    if (watch === undefined) baseline = undefined;
    else if (baseline === undefined) {
      baseline = watch.sample();
      if (baseline !== undefined) log.debug({ sockets: baseline, elapsedMs: Math.round(now.elapsedMs) }, 'watching the socket count for a closed connection');
    }
    if (watch?.offReason !== undefined && !saidOff) {
      log.info({ reason: watch.offReason }, 'socket count unreadable: end-game reads at the regular cadence');
      saidOff = true;
    }
    const hinted = watch !== undefined && baseline !== undefined;
    try {
      const flushWindowMs = timeFlushes ? flushWindowStartMs(flushes) : undefined;
      const delayMs = nextReadDelay(options, now, hinted, flushWindowMs);
      if (!hinted) {
        await sleep(delayMs, undefined, { signal });
        trigger = flushWindowMs !== undefined && delayMs > nextReadDelay(options, now) ? 'flush' : 'cadence';
      } else {
        const woke = await watchSockets(watch, baseline as SocketCounts, delayMs, hintPollMs((now.connections ?? 0) - options.exitAtConnections), signal);
        ({ trigger, baseline } = woke);
      }
    } catch {
      return outcome('interrupted');
    }
  }
}

/**
 * Samples the socket count every `pollMs` for up to `delayMs`: a count below `baseline` (a socket
 * closed) ends the wait at once, and that sample is the next baseline. A count above it is no
 * close, and an admin call's own short-lived connection (through a proxy, say) goes up and back
 * down to it, so neither wakes the drain. At the end of a quiet wait the last sample is the next
 * baseline: no read was in flight to inflate it. Plain timers and one abort listener: this runs
 * up to 50 times a second.
 */
function watchSockets(watch: SocketWatch, baseline: SocketCounts, delayMs: number, pollMs: number, signal: AbortSignal): Promise<{ trigger: ReadTrigger; baseline: SocketCounts | undefined }> {
  const until = Date.now() + delayMs;
  let last = baseline;
  return new Promise((resolve, reject) => {
    let timer: NodeJS.Timeout | undefined;
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const done = (result: { trigger: ReadTrigger; baseline: SocketCounts | undefined }): void => {
      signal.removeEventListener('abort', onAbort);
      resolve(result);
    };
    const look = (): void => {
      const next = watch.sample();
      if (next === undefined) return done({ trigger: 'hint-off', baseline: undefined });
      if (fewerSockets(next, baseline)) return done({ trigger: 'hint', baseline: next });
      last = next;
      const left = until - Date.now();
      if (left <= 0) return done({ trigger: 'safety-net', baseline: last });
      timer = setTimeout(look, Math.min(pollMs, left));
    };
    if (signal.aborted) return reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    // The first look comes at once: a socket may have closed during the read (the other side of
    // the connection whose first side woke the drain, say).
    look();
  });
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
