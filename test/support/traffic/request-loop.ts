// The one request loop of every load (the load balancer's clients, the peer pods' protocol loads):
// requests back to back with a pause between them, until told to stop, and bounded in count and
// time whatever happens, so a load always ends by itself.
import { setTimeout as sleep } from 'node:timers/promises';

/** After a failure a loop waits at least this long, as a backing-off client would; the failure is still recorded. */
const FAILURE_PAUSE_MS = 50;
/** A loop's bounds unless it names its own. */
const LOOP_MAX_REQUESTS = 20_000;
const LOOP_MAX_MS = 60_000;

export interface LoopOptions {
  /** The pause after each request. */
  readonly thinkTimeMs: number;
  /** Ends the loop: a pause ends at once, a request in flight is always awaited, never abandoned. */
  readonly signal?: AbortSignal;
  /** Asked before each request after the first: false ends the loop. */
  readonly goOn?: () => boolean;
  readonly maxRequests?: number;
  readonly maxMs?: number;
  /** Called after each request ended (either way), with Date.now() from just before it was sent. */
  readonly onRequestDone?: (sentAt: number) => void;
}

/** Calls `send` (one request; it never rejects and says whether it succeeded) until the loop ends. */
export async function runLoop(send: (n: number) => Promise<boolean>, options: LoopOptions): Promise<void> {
  const { thinkTimeMs, signal, goOn = () => true, maxRequests = LOOP_MAX_REQUESTS, maxMs = LOOP_MAX_MS, onRequestDone } = options;
  const deadline = Date.now() + maxMs;
  for (let n = 0; n < maxRequests && Date.now() < deadline && signal?.aborted !== true && (n === 0 || goOn()); n += 1) {
    const sentAt = Date.now();
    const ok = await send(n);
    onRequestDone?.(sentAt);
    try {
      await sleep(ok ? thinkTimeMs : Math.max(thinkTimeMs, FAILURE_PAUSE_MS), undefined, signal === undefined ? {} : { signal });
    } catch {
      // Aborted: the loop condition sees it and stops.
    }
  }
}
