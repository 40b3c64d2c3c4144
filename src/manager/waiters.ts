// Every held /shutdown/ready request in one place, released together. However many wait, the
// crowd shares one ready-file wait, one watchdog watch and one --ready-timeout timer; a waiter
// costs one map entry and one 'close' listener (the same function for all), and a release builds
// its answer once and logs one line. Nothing of a waiter that went away stays behind.
import type { ServerResponse } from 'node:http';
import { formatDuration } from '../shared/duration.js';
import { type Answer, describe, noDrainAnswer, readyAnswer, STOPPING_ANSWER, timeoutAnswer, write } from './answers.js';
import type { DrainWatchdog, NoDrain } from './drain-watchdog.js';
import type { LogSummary } from './log-summary.js';
import type { ReadyContent, ReadyWatch } from './ready-watch.js';

export interface WaitersOptions {
  /** Infinity: no timeout (Contour's manager waits until the file appears or the client leaves). */
  readonly readyTimeoutMs: number;
  readonly drainStartTimeoutMs: number;
  readonly readyWatch: Pick<ReadyWatch, 'wait'>;
  readonly watchdog: Pick<DrainWatchdog, 'watch'>;
  /** The body of a 200; undefined: the drain report. */
  readonly okBody: string | undefined;
  /** The first waiter that is Envoy's preStop hook arrived (`true`); the last such one is done (`false`). */
  readonly onEnvoyPrestop: (waiting: boolean) => void;
  readonly summary: LogSummary;
  /** Called whenever a waiter is done (answered and its bytes out, or gone). */
  readonly onDone: (how: 'answered' | 'gone') => void;
  /** Called with each answer's status as it is written (for /metrics). */
  readonly onAnswer?: (status: number) => void;
  /** Called after the ready file released the waiters: every answer is written by then. */
  readonly onRelease?: (content: ReadyContent) => void;
  /** Monotonic milliseconds (tests pass their own clock). */
  readonly now?: () => number;
}

interface Waiter {
  /** The clock at arrival: arrival order is deadline order. */
  readonly since: number;
  readonly envoyPrestop: boolean;
  answered: boolean;
}

/** While someone waits: the shared wait for the file and the watchdog's watch. */
interface Episode {
  readonly gone: AbortController;
  unwatch: () => void;
}

export class Waiters {
  readonly #options: WaitersOptions;
  /** Held or answered with bytes still going out, in arrival order; each leaves at its 'close'. */
  readonly #all = new Map<ServerResponse, Waiter>();
  #waiting = 0;
  #hookWaiters = 0;
  #episode: Episode | undefined;
  #timer: NodeJS.Timeout | undefined;
  /** Set once the manager stops: every waiter, and any that still arrives, is answered at once. */
  #stopAnswer: Answer | undefined;
  readonly #onClose: (this: ServerResponse) => void;
  readonly #now: () => number;

  constructor(options: WaitersOptions) {
    this.#options = options;
    this.#now = options.now ?? (() => performance.now());
    const closed = (response: ServerResponse): void => this.#closed(response);
    this.#onClose = function onClose(this: ServerResponse) {
      closed(this);
    };
  }

  /** Waiters not answered yet. */
  get waiting(): number {
    return this.#waiting;
  }

  /** Waiters not done yet: held, or answered with bytes still going out. */
  get pending(): number {
    return this.#all.size;
  }

  add(response: ServerResponse, envoyPrestop: boolean): void {
    this.#all.set(response, { since: this.#now(), envoyPrestop, answered: false });
    response.on('close', this.#onClose);
    this.#waiting += 1;
    if (envoyPrestop && ++this.#hookWaiters === 1) this.#options.onEnvoyPrestop(true);
    // Envoy's own preStop request means the pod terminates: never folded into strangers' lines.
    const fields = { remote: response.req.socket.remoteAddress, waiting: this.#waiting, envoyPrestop };
    this.#options.summary.event('info', fields, 'waiting for the drain to finish', `waiting:${envoyPrestop}`);
    if (this.#stopAnswer !== undefined) {
      this.#answer(response, this.#stopAnswer);
      return;
    }
    if (this.#episode === undefined) this.#begin();
    if (this.#timer === undefined && Number.isFinite(this.#options.readyTimeoutMs)) this.#arm(this.#options.readyTimeoutMs);
  }

  /** The manager stops: answer everyone with `content` or, without it, 500 (the manager logs why once). */
  stop(content: ReadyContent | undefined): void {
    this.#stopAnswer = content === undefined ? STOPPING_ANSWER : readyAnswer(content, this.#options.okBody);
    this.#answerAll(this.#stopAnswer);
  }

  #begin(): void {
    const episode: Episode = { gone: new AbortController(), unwatch: () => undefined };
    this.#episode = episode;
    episode.unwatch = this.#options.watchdog.watch((noDrain) => {
      if (this.#episode === episode) this.#giveUp(noDrain);
    });
    void this.#options.readyWatch.wait(episode.gone.signal).then((content) => {
      if (content !== undefined && this.#episode === episode) this.#release(content);
    });
  }

  /** Nobody waits any more: the shared wait, watch and timer stop until the next waiter. */
  #end(): void {
    const episode = this.#episode;
    this.#episode = undefined;
    episode?.gone.abort();
    episode?.unwatch();
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #release(content: ReadyContent): void {
    const { count, waitedMs } = this.#answerAll(readyAnswer(content, this.#options.okBody));
    this.#options.summary.event('info', { waiters: count, waitedMs, ...describe(content) }, 'drain finished: releasing envoy');
    this.#options.onRelease?.(content);
  }

  #giveUp(noDrain: NoDrain): void {
    const { message, answer } = noDrainAnswer(noDrain);
    const { count, waitedMs } = this.#answerAll(answer);
    const fields = { waiters: count, waitedMs, drainStartTimeout: formatDuration(this.#options.drainStartTimeoutMs), ...noDrain };
    this.#options.summary.event('error', fields, message);
  }

  /** Answers every waiter not answered yet; returns how many, and the longest wait. */
  #answerAll(answer: Answer): { count: number; waitedMs: number } {
    let count = 0;
    let oldest = Number.POSITIVE_INFINITY;
    for (const [response, waiter] of this.#all) {
      if (waiter.answered) continue;
      count += 1;
      oldest = Math.min(oldest, waiter.since);
      this.#answer(response, answer);
    }
    return { count, waitedMs: count === 0 ? 0 : Math.round(this.#now() - oldest) };
  }

  #answer(response: ServerResponse, answer: Answer): void {
    const waiter = this.#all.get(response);
    if (waiter === undefined || waiter.answered) return;
    waiter.answered = true;
    if (--this.#waiting === 0) this.#end();
    // Counted as done only at its 'close', once its bytes are out: the process may exit right after.
    write(response, answer);
    this.#options.onAnswer?.(answer.status);
  }

  /** One timer for the crowd, armed for the oldest waiter's deadline. */
  #arm(delayMs: number): void {
    this.#timer = setTimeout(() => this.#timeOut(), Math.max(1, Math.ceil(delayMs)));
  }

  #timeOut(): void {
    this.#timer = undefined;
    const { readyTimeoutMs } = this.#options;
    const now = this.#now();
    const due: ServerResponse[] = [];
    let next: number | undefined;
    for (const [response, waiter] of this.#all) {
      if (waiter.answered) continue;
      if (waiter.since + readyTimeoutMs > now) {
        next = waiter.since + readyTimeoutMs - now;
        break;
      }
      due.push(response);
    }
    const answer = timeoutAnswer(readyTimeoutMs);
    for (const response of due) this.#answer(response, answer);
    if (due.length > 0) {
      const fields = { waiters: due.length, readyTimeout: formatDuration(readyTimeoutMs) };
      this.#options.summary.event('error', fields, 'ready file did not appear before --ready-timeout: releasing envoy undrained');
    }
    if (next !== undefined && this.#waiting > 0) this.#arm(next);
  }

  #closed(response: ServerResponse): void {
    const waiter = this.#all.get(response);
    if (waiter === undefined) return;
    this.#all.delete(response);
    if (waiter.envoyPrestop && --this.#hookWaiters === 0) this.#options.onEnvoyPrestop(false);
    if (!waiter.answered) {
      // The client went away before its answer: forget it at once.
      if (--this.#waiting === 0) this.#end();
      this.#options.summary.event('info', { waitedMs: Math.round(this.#now() - waiter.since) }, 'waiter went away');
    }
    this.#options.onDone(waiter.answered ? 'answered' : 'gone');
  }
}
