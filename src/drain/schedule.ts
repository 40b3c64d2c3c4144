// When the drain reads Envoy next, and why. Pure: no clock, no I/O; drain.ts sleeps and samples.
//
//   refused read                → again in 250 ms (is Envoy gone?)
//   before the drain may finish → every check interval; near the end of a quiet period, a quarter of it
//   once it may finish          → the end game: 25 ms with one connection left, 4× slower per further
//                                 one; where the kernel's socket count (free to read) is watched, a
//                                 close brings the read at once, and a quarter of the check
//                                 interval (counting requests, 100 ms) is the safety net
//   always                      → no sooner than the reads so far, with this one, keep to their share of
//                                 Envoy's main thread (READ_SHARE; before the drain may finish, half)
//
// A read's price is measured on this Envoy (stats-reader.ts): the least time a read of its kind
// took, Envoy's work at most. On a busy node that is inflated by waiting, and the only cost of the
// error is a later read: the release comes at most price ÷ READ_SHARE after the close (25 ms for
// each millisecond a read takes), never at Envoy's expense.
import { type DrainPolicy, earliestFinishMs } from './policy.js';

/** All reads together take at most this share of Envoy's main thread since the drain began. */
export const READ_SHARE = 0.04;
/** Before the drain may finish, reads keep to this share, saving the rest for the reads that end it. */
export const PROGRESS_SHARE = READ_SHARE / 2;
export const FAST_READ_INTERVAL_MS = 25;
const END_GAME_GROWTH = 4;
/** The socket count is looked at every 20 ms with one connection left, END_GAME_GROWTH times less often per further one. */
export const HINT_POLL_MS = 20;
/** The socket count is watched while at most this many connections hold the drain (any number, counting requests). */
export const HINT_MAX_OVER = 3;
/** Counting only requests, reads come at least this often: a request can end without a socket closing (an HTTP/2 stream). */
export const REQUESTS_END_GAME_MAX_MS = FAST_READ_INTERVAL_MS * END_GAME_GROWTH;
/** While the socket count is watched, the regular end-game reads come every check interval / SAFETY_NET_SHARE. */
const SAFETY_NET_SHARE = 4;
/** With a quiet period, reads near the drain's earliest end come at least every quietPeriod / QUIET_READ_SHARE. */
export const QUIET_READ_SHARE = 4;
/** After a refused read the next one comes this soon: a dead Envoy is recognised within about 0.5 s. */
export const REFUSED_READ_INTERVAL_MS = 250;

export interface ScheduleInput {
  /** Milliseconds since the drain began, and since it began when the last read started. */
  readonly elapsedMs: number;
  readonly lastReadMs: number;
  /** The count decided on; undefined when unknown. */
  readonly connections: number | undefined;
  readonly lastNewConnectionMs: number;
  readonly refusedReads: number;
  readonly countingRequests: boolean;
  /** What the reads so far cost Envoy, and what the next one will (0 before any). */
  readonly spentMs: number;
  readonly priceMs: number;
  /** The kernel's socket count can be watched for a closed connection. */
  readonly socketsReadable: boolean;
}

export type ReadReason = 'first' | 'cadence' | 'quiet-period' | 'may-finish' | 'end-game' | 'socket-closed' | 'share' | 'refused' | 'timeout';

export interface NextRead {
  /** When the next read comes (drain clock), unless a socket closes first (`watch`). */
  readonly atMs: number;
  readonly why: ReadReason;
  /** Sample the socket count every `pollMs`: one fewer brings the read forward, to no sooner than `earliestMs`. */
  readonly watch?: { readonly pollMs: number; readonly earliestMs: number };
}

export function nextRead(policy: DrainPolicy, now: ScheduleInput): NextRead {
  const { elapsedMs } = now;
  const affordableAt = (share: number): number => (now.spentMs + now.priceMs) / share;
  const earliest = earliestFinishMs(policy, now.lastNewConnectionMs);
  let next: NextRead;
  if (now.refusedReads > 0) {
    // Nothing answered: confirm a dead Envoy quickly, whatever the phase (a refused read costs it nothing).
    next = { atMs: elapsedMs + REFUSED_READ_INTERVAL_MS, why: 'refused' };
  } else if (elapsedMs < earliest) {
    next = { atMs: Math.max(elapsedMs + policy.checkIntervalMs, affordableAt(PROGRESS_SHARE)), why: 'cadence' };
    // Arrivals are dated to the read that saw them: near the earliest end, read often enough that
    // the quiet period is overrun by a share of itself at most.
    if (policy.quietPeriodMs > 0 && next.atMs > policy.minDrainMs - policy.quietPeriodMs) {
      const quietAt = Math.max(elapsedMs + Math.max(FAST_READ_INTERVAL_MS, policy.quietPeriodMs / QUIET_READ_SHARE), affordableAt(PROGRESS_SHARE));
      if (quietAt < next.atMs) next = { atMs: quietAt, why: 'quiet-period' };
    }
    const finishAt = Math.max(earliest, affordableAt(READ_SHARE));
    if (finishAt <= next.atMs) next = { atMs: finishAt, why: finishAt > earliest ? 'share' : 'may-finish' };
  } else {
    next = endGame(policy, now, affordableAt(READ_SHARE));
  }
  return next.atMs < policy.drainTimeoutMs ? next : { atMs: Math.max(elapsedMs, policy.drainTimeoutMs), why: 'timeout' };
}

/**
 * Once the drain may finish: reads as often as the distance to the threshold warrants, since
 * several connections must close before it can end; with the socket count watched, a quarter of
 * the check interval, a safety net.
 */
function endGame(policy: DrainPolicy, now: ScheduleInput, affordableMs: number): NextRead {
  if (now.connections === undefined) return { atMs: Math.max(now.elapsedMs + policy.checkIntervalMs, affordableMs), why: 'cadence' };
  const over = Math.max(1, now.connections - policy.exitAtConnections);
  const steps = END_GAME_GROWTH ** (over - 1);
  const watched = now.socketsReadable && (now.countingRequests || over <= HINT_MAX_OVER);
  let paceMs = Math.min(policy.checkIntervalMs, FAST_READ_INTERVAL_MS * steps);
  // Watched, a close brings the read that matters: the regular ones only catch what the count
  // misses. Counting requests, that is often the end itself: an HTTP/2 stream ends on a connection
  // Envoy keeps open until its own drain timeout, and many can end at once.
  if (now.countingRequests) paceMs = Math.min(paceMs, REQUESTS_END_GAME_MAX_MS);
  else if (watched) paceMs = Math.max(FAST_READ_INTERVAL_MS, policy.checkIntervalMs / SAFETY_NET_SHARE);
  const pacedAt = now.elapsedMs + paceMs;
  const next: NextRead = affordableMs > pacedAt ? { atMs: affordableMs, why: 'share' } : { atMs: pacedAt, why: 'end-game' };
  if (!watched) return next;
  // Each look wakes the process (about 0.2 ms of CPU): fast only when one close can end the drain.
  const pollMs = now.countingRequests ? HINT_POLL_MS : HINT_POLL_MS * steps;
  const earliestMs = Math.max(affordableMs, now.countingRequests ? now.lastReadMs + FAST_READ_INTERVAL_MS : 0);
  return { ...next, watch: { pollMs, earliestMs } };
}
