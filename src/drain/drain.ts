// The drain sequence: fail Envoy's health check, start a graceful drain, then read the connection
// count until the policy says the drain is over. Only I/O and timing live here; every decision
// is made by the pure functions in progress.ts, policy.ts and schedule.ts.
import { setTimeout as sleep } from 'node:timers/promises';
import type { ConnectionSource, EnvoyControl } from '../envoy/envoy-control.js';
import type { SocketWatch } from '../envoy/socket-watch.js';
import type { DrainResult } from '../handoff/drain-result.js';
import { AdminError, errorMessage } from '../shared/errors.js';
import type { Logger } from '../shared/log.js';
import { type DrainPolicy, startGiveUpMs, startRetryDelayMs } from './policy.js';
import { type DrainLogLine, decide, INITIAL_STATE, observe } from './progress.js';
import { Reads } from './reads.js';
import { nextRead, type ReadReason } from './schedule.js';

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
  /**
   * Drained: when the read came that began the final run of counts at or under
   * --exit-at-connections (at 0, the last connection closed between it and the read before).
   */
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

export async function runDrain(options: DrainOptions, deps: DrainDeps): Promise<DrainOutcome> {
  const tally = new DrainTally(options.exitAtConnections);
  const notStarted = await startDrain(options, deps, tally);
  if (notStarted !== undefined) return notStarted;
  deps.log.info({ elapsedMs: Math.round(tally.elapsed()) }, 'graceful drain started');
  const lateHealthCheck =
    options.healthCheckFailureDelayMs === 0
      ? undefined
      : scheduleLateHealthCheck(options.healthCheckFailureDelayMs - tally.elapsed(), options.adminTimeoutMs, deps.envoy, deps.log);
  try {
    return await pollUntilDrained(options, deps, tally);
  } finally {
    await lateHealthCheck?.cancel();
  }
}

/** The drain's clock, and what it has seen of the count: each outcome is made of these. */
class DrainTally {
  readonly #exitAtConnections: number;
  #startedAt = Date.now();
  #clockStarted = false;
  #lastCount: number | null = null;
  #settledAt: number | undefined;

  constructor(exitAtConnections: number) {
    this.#exitAtConnections = exitAtConnections;
  }

  /**
   * The clock starts when Envoy has answered the first call that changes it (the health check
   * failure, or the drain itself when that comes first): Envoy never fails its health check for
   * less than the minimum drain, however slow that call or its retries were.
   */
  startClock(): void {
    if (!this.#clockStarted) this.#startedAt = Date.now();
    this.#clockStarted = true;
  }

  elapsed(): number {
    return Date.now() - this.#startedAt;
  }

  remember(count: number | null): void {
    this.#lastCount = count;
    if (count === null || count > this.#exitAtConnections) this.#settledAt = undefined;
    else this.#settledAt ??= this.elapsed();
  }

  outcome(result: DrainOutcome['result']): DrainOutcome {
    const settledAt = this.#settledAt;
    return {
      result,
      connections: this.#lastCount,
      elapsedMs: Math.round(this.elapsed()),
      ...(result === 'drained' && settledAt !== undefined ? { lastConnectionMs: Math.round(settledAt) } : {}),
    };
  }
}

/** Fails the health check (unless it comes later) and starts the graceful drain; an outcome when that could not be done. */
async function startDrain(options: DrainOptions, { envoy, log, signal }: DrainDeps, tally: DrainTally): Promise<DrainOutcome | undefined> {
  const startBy = { at: Date.now() + startGiveUpMs(options.adminTimeoutMs), now: Date.now };
  try {
    if (options.healthCheckFailureDelayMs === 0) {
      await withRetries('fail health check', (s, t) => envoy.failHealthCheck(s, t), log, signal, startBy);
      tally.startClock();
      log.info('health check failed: Envoy reports itself unhealthy');
    }
    await withRetries('start graceful drain', (s, t) => envoy.startGracefulDrain(s, t), log, signal, startBy);
    tally.startClock();
    return undefined;
  } catch (error) {
    if (signal.aborted) return tally.outcome('interrupted');
    log.error({ err: errorMessage(error), elapsedMs: Math.round(tally.elapsed()) }, 'envoy admin API unreachable or misbehaving: no drain started');
    return tally.outcome('envoy-unreachable');
  }
}

async function pollUntilDrained(options: DrainOptions, deps: DrainDeps, tally: DrainTally): Promise<DrainOutcome> {
  const { log } = deps;
  const say = (events: readonly DrainLogLine[]): void => {
    for (const { level, fields, msg } of events) log[level](fields, msg);
  };
  if (options.quietPeriodMs > 0) log.info({ quietPeriodMs: options.quietPeriodMs }, 'quiet period started');
  const reads = new Reads(options, deps, () => tally.elapsed());
  let state = INITIAL_STATE;
  let why: ReadReason | undefined = 'first';
  for (;;) {
    const reading = await reads.next(why);
    if (reading === undefined) return tally.outcome('interrupted');
    state = observe(options, state, reading);
    tally.remember(state.lastCount);
    say(state.events);
    const decided = decide(options, state, tally.elapsed());
    state = decided.state;
    say(state.events);
    if (decided.decision.kind === 'done') return tally.outcome(decided.decision.reason);
    why = await reads.waitFor(nextRead(options, reads.now(state)));
    if (why === undefined) return tally.outcome('interrupted');
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
  const timer = setTimeout(
    () => {
      const by = { at: Date.now() + startGiveUpMs(adminTimeoutMs), now: Date.now };
      inFlight = withRetries('fail health check', (s, t) => envoy.failHealthCheck(s, t), log, controller.signal, by).then(
        () => log.info('health check failed after the configured delay'),
        (error: unknown) => {
          if (!controller.signal.aborted) log.error({ err: errorMessage(error) }, 'could not fail health check');
        },
      );
    },
    Math.max(0, delayMs),
  );
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
