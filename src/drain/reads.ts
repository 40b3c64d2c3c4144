// The drain's reads of Envoy and the waits between them, as schedule.ts says: this file reads,
// charges each read its price, gathers what schedule.ts decides on, sleeps, samples the kernel's
// socket count (a drop brings the read forward, as far as schedule.ts allows) and logs each of
// these. What each reading means is progress.ts's business; when to read, schedule.ts's.
import { isEnvoyGone } from '../envoy/admin-client.js';
import { type SocketCounts, type SocketWatch, socketClosed } from '../envoy/socket-watch.js';
import { errorMessage } from '../shared/errors.js';
import type { DrainDeps, DrainOptions } from './drain.js';
import { readTimeoutMs } from './policy.js';
import type { DrainState, Reading } from './progress.js';
import type { NextRead, ReadReason, ScheduleInput } from './schedule.js';

export class Reads {
  readonly #options: DrainOptions;
  readonly #deps: DrainDeps;
  /** The drain's clock: milliseconds since it began. */
  readonly #elapsed: () => number;
  /** The socket count as last seen: a drop below it, even during the read that follows, is caught. */
  #baseline: SocketCounts | undefined;
  #saidOff = false;
  /** What the reads so far cost Envoy, each at its price. */
  #spentMs = 0;
  #lastReadMs = Number.NEGATIVE_INFINITY;

  constructor(options: DrainOptions, deps: DrainDeps, elapsed: () => number) {
    this.#options = options;
    this.#deps = deps;
    this.#elapsed = elapsed;
  }

  /** Reads the counts; undefined when interrupted. A failed read is a reading too: the progress decides what it means. */
  async next(why: ReadReason): Promise<Reading | undefined> {
    const { envoy, log, signal } = this.#deps;
    const startMs = this.#elapsed();
    this.#lastReadMs = startMs;
    log.debug({ why, elapsedMs: Math.round(startMs) }, 'reading connections');
    try {
      const counts = await envoy.readConnections(signal, readTimeoutMs(this.#options, startMs, this.#options.adminTimeoutMs));
      this.#spentMs += counts.read.priceMs;
      return { elapsedMs: this.#elapsed(), counts };
    } catch (error) {
      if (signal.aborted) return undefined;
      return { elapsedMs: this.#elapsed(), failed: errorMessage(error), refused: isEnvoyGone(error) };
    }
  }

  /** What schedule.ts decides on, now. */
  now(state: DrainState): ScheduleInput {
    const sockets = this.#options.connections === 'listeners' ? this.#deps.sockets : undefined;
    return {
      elapsedMs: this.#elapsed(),
      lastReadMs: this.#lastReadMs,
      connections: state.connections,
      lastNewConnectionMs: state.lastNewConnectionMs,
      refusedReads: state.refusedReads,
      countingRequests: state.countingRequests,
      spentMs: this.#spentMs,
      priceMs: this.#deps.envoy.nextReadPriceMs(),
      socketsReadable: sockets !== undefined && sockets.offReason === undefined,
    };
  }

  /** Waits for the next read; why it comes, or undefined when interrupted. */
  async waitFor(next: NextRead): Promise<ReadReason | undefined> {
    const watch = next.watch === undefined ? undefined : this.#deps.sockets;
    if (watch === undefined || next.watch === undefined) this.#baseline = undefined;
    else if (this.#baseline === undefined) {
      this.#baseline = watch.sample();
      if (this.#baseline !== undefined)
        this.#deps.log.debug({ sockets: this.#baseline, elapsedMs: Math.round(this.#elapsed()) }, 'watching the socket count for a closed connection');
    }
    try {
      if (watch === undefined || next.watch === undefined || this.#baseline === undefined) {
        await until(next.atMs, this.#elapsed, this.#deps.signal);
        return next.why;
      }
      return await this.#watch(watch, next.watch, next);
    } catch {
      return undefined;
    } finally {
      this.#sayIfOff();
    }
  }

  /** Samples the socket count every `pollMs` until `next.atMs`: one fewer than the baseline brings the read, no sooner than `earliestMs`. */
  async #watch(watch: SocketWatch, { pollMs, earliestMs }: NonNullable<NextRead['watch']>, next: NextRead): Promise<ReadReason> {
    const { signal } = this.#deps;
    for (;;) {
      const counts = watch.sample();
      if (counts === undefined) {
        this.#baseline = undefined;
        await until(next.atMs, this.#elapsed, signal);
        return next.why;
      }
      const baseline = this.#baseline as SocketCounts;
      if (socketClosed(counts, baseline)) {
        this.#baseline = counts;
        await until(Math.min(earliestMs, next.atMs), this.#elapsed, signal);
        return 'socket-closed';
      }
      this.#baseline = counts;
      const left = next.atMs - this.#elapsed();
      if (left <= 0) return next.why;
      await pause(Math.min(pollMs, left), signal);
    }
  }

  #sayIfOff(): void {
    const off = this.#deps.sockets?.offReason;
    if (off === undefined || this.#saidOff || this.#options.connections !== 'listeners') return;
    this.#deps.log.info({ reason: off }, 'socket count unreadable: end-game reads at the regular cadence');
    this.#saidOff = true;
  }
}

/** Sleeps until the drain clock reads `atMs` (a timer may fire a millisecond early); rejects when `signal` aborts. */
async function until(atMs: number, elapsed: () => number, signal: AbortSignal): Promise<void> {
  for (let left = atMs - elapsed(); left > 0; left = atMs - elapsed()) await pause(Math.ceil(left), signal);
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal.reason as Error);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
}
