// The drain's reads of Envoy and the waits between them: when the next read is due (the policy's
// cadence, the stats flushes' timing) and the kernel's socket count as a hint that a connection
// closed. What each reading means is progress.ts's business.
import { setTimeout as sleep } from 'node:timers/promises';
import { isEnvoyGone } from '../envoy/admin-client.js';
import { type SocketCounts, fewerSockets } from '../envoy/socket-count.js';
import type { SocketWatch } from '../envoy/socket-watch.js';
import { errorMessage } from '../shared/errors.js';
import type { DrainDeps, DrainOptions } from './drain.js';
import { NO_FLUSHES, flushWindowStartMs, noteRead } from './flush-timing.js';
import { hintPollMs, hintReadDelayMs, hintWanted, nextReadDelay, readCostMs, readCostWaitMs, readTimeoutMs } from './policy.js';
import type { DrainState, Reading } from './progress.js';

/**
 * Why a read happens, logged at debug level with each: the first one, the regular cadence, the
 * hint's safety net running out, the socket count dropping, the hint turning itself off, or (with
 * `total`) a wait for the next stats flush that was longer than the cadence.
 */
export type ReadTrigger = 'first' | 'cadence' | 'safety-net' | 'hint' | 'hint-off' | 'flush';

/** One admin read after another, and the waits between them: the cadence, the stats flushes' timing, the socket-count hint. */
export class Reads {
  readonly #options: DrainOptions;
  readonly #deps: DrainDeps;
  /** The drain's clock: milliseconds since it began. */
  readonly #elapsed: () => number;
  /**
   * With `total`, when reads saw server.uptime move: the end game's reads are timed to the stats
   * flushes. Not when idle connections are ignored: that end game counts live gauges, not the flush.
   */
  readonly #timeFlushes: boolean;
  #flushes = NO_FLUSHES;
  /** The socket count as last seen while the hint watched: a drop below it, even during the read that follows, is caught. */
  #baseline: SocketCounts | undefined;
  #saidOff = false;
  /** What the reads so far cost Envoy (policy.ts readCostMs), and the least a steady read took. */
  #readsCostMs = 0;
  /** Some read's cost was known only from how long it took (no size to price it by). */
  #readsCostTimed = false;
  #leastSteadyMs: number | undefined;
  /** When the last read, and the last read the hint brought, started (drain clock). */
  #lastReadMs = Number.NEGATIVE_INFINITY;
  #lastHintReadMs = Number.NEGATIVE_INFINITY;

  constructor(options: DrainOptions, deps: DrainDeps, elapsed: () => number) {
    this.#options = options;
    this.#deps = deps;
    this.#elapsed = elapsed;
    this.#timeFlushes = options.connections === 'total' && !options.ignoreIdleConnections;
  }

  /** Reads the counts; undefined when interrupted. A failed read is a reading too: the progress decides what it means. */
  async next(trigger: ReadTrigger): Promise<Reading | undefined> {
    const { envoy, log, signal } = this.#deps;
    const startMs = this.#elapsed();
    this.#lastReadMs = startMs;
    if (trigger === 'hint') this.#lastHintReadMs = startMs;
    log.debug({ trigger, elapsedMs: Math.round(startMs) }, 'reading connections');
    try {
      const counts = await envoy.readConnections(signal, readTimeoutMs(this.#options, this.#elapsed(), this.#options.adminTimeoutMs));
      const reading = { elapsedMs: this.#elapsed(), counts };
      const tookMs = reading.elapsedMs - startMs;
      const costMs = Math.min(readCostMs(counts.fullRead === true, tookMs, this.#leastSteadyMs), counts.envoyCostMs ?? Number.POSITIVE_INFINITY);
      this.#readsCostMs += costMs;
      if (counts.envoyCostMs === undefined) this.#readsCostTimed = true;
      if (counts.fullRead !== true) this.#leastSteadyMs = costMs;
      if (this.#timeFlushes && counts.uptimeS !== undefined) this.#flushes = noteRead(this.#flushes, { startMs, endMs: reading.elapsedMs, uptimeS: counts.uptimeS });
      return reading;
    } catch (error) {
      if (signal.aborted) return undefined;
      return { elapsedMs: this.#elapsed(), failed: errorMessage(error), refused: isEnvoyGone(error) };
    }
  }

  /** Waits until the next read is due, or the hint says a connection closed; what woke it, or undefined when interrupted. */
  async waitAfter(state: DrainState): Promise<ReadTrigger | undefined> {
    const { log, signal, sockets } = this.#deps;
    const options = this.#options;
    const now = {
      elapsedMs: this.#elapsed(),
      connections: state.connections,
      lastNewConnectionMs: state.lastNewConnectionMs,
      refusedReads: state.refusedReads,
      countingRequests: state.countingRequests,
      readsCostMs: this.#readsCostMs,
      readsCostTimed: this.#readsCostTimed,
    };
    const watch = options.connections === 'listeners' && hintWanted(options, now) ? sockets : undefined;
    if (watch === undefined) this.#baseline = undefined;
    else if (this.#baseline === undefined) {
      this.#baseline = watch.sample();
      if (this.#baseline !== undefined) log.debug({ sockets: this.#baseline, elapsedMs: Math.round(now.elapsedMs) }, 'watching the socket count for a closed connection');
    }
    if (watch?.offReason !== undefined && !this.#saidOff) {
      log.info({ reason: watch.offReason }, 'socket count unreadable: end-game reads at the regular cadence');
      this.#saidOff = true;
    }
    const baseline = watch === undefined ? undefined : this.#baseline;
    try {
      const flushWindowMs = this.#timeFlushes ? flushWindowStartMs(this.#flushes) : undefined;
      const delayMs = nextReadDelay(options, now, baseline !== undefined, flushWindowMs);
      if (watch === undefined || baseline === undefined) {
        await sleep(delayMs, undefined, { signal });
        return flushWindowMs !== undefined && delayMs > nextReadDelay(options, now) ? 'flush' : 'cadence';
      }
      const counting = now.countingRequests === true;
      // A read the hint brings keeps to the reads' share of Envoy's main thread as well.
      const holdMs = Math.max(hintReadDelayMs(counting, now.elapsedMs - this.#lastReadMs, now.elapsedMs - this.#lastHintReadMs), readCostWaitMs(options, now));
      const woke = await watchSockets(watch, baseline, { delayMs, pollMs: hintPollMs((now.connections ?? 0) - options.exitAtConnections, counting), holdMs }, signal);
      this.#baseline = woke.baseline;
      return woke.trigger;
    } catch {
      return undefined;
    }
  }
}

/**
 * Samples the socket count every `pollMs` for up to `delayMs`: a count below `baseline` (a socket
 * closed) ends the wait, at once or once `holdMs` has passed, and that sample is the next baseline. A count above it is no
 * close, and an admin call's own short-lived connection (through a proxy, say) goes up and back
 * down to it, so neither wakes the drain. At the end of a quiet wait the last sample is the next
 * baseline: no read was in flight to inflate it. Plain timers and one abort listener: this runs
 * up to 50 times a second.
 */
function watchSockets(
  watch: SocketWatch,
  baseline: SocketCounts,
  { delayMs, pollMs, holdMs }: { readonly delayMs: number; readonly pollMs: number; readonly holdMs: number },
  signal: AbortSignal,
): Promise<{ trigger: ReadTrigger; baseline: SocketCounts | undefined }> {
  const startedAt = Date.now();
  const until = startedAt + delayMs;
  const heldUntil = startedAt + holdMs;
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
      const now = Date.now();
      if (fewerSockets(next, baseline)) {
        const hold = Math.min(heldUntil, until) - now;
        if (hold <= 0) return done({ trigger: 'hint', baseline: next });
        timer = setTimeout(() => done({ trigger: 'hint', baseline: next }), hold);
        return;
      }
      last = next;
      const left = until - now;
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
