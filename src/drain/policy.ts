// When a drain is finished, and when to look next. Pure: no clock, no I/O.
import type { DrainResult } from '../handoff/drain-result.js';

export interface DrainPolicy {
  /** Never finish before this much time has passed (load balancers are still deprogramming). */
  readonly minDrainMs: number;
  /** Always finish at this point, connections or not. */
  readonly drainTimeoutMs: number;
  /** Finished when the count is at or under this. */
  readonly exitAtConnections: number;
  /** The slowest cadence of reads (unless their share of Envoy's main thread holds them: readCostWaitMs), and of progress log lines. */
  readonly checkIntervalMs: number;
  /** 0: off. Otherwise finish only once no new connection was accepted for this long. */
  readonly quietPeriodMs: number;
}

/** What the drain knows at one moment. Times are milliseconds since the drain began. */
export interface DrainObservation {
  readonly elapsedMs: number;
  /** Undefined while no read has succeeded yet, or when the last one failed. */
  readonly connections: number | undefined;
  /** When a new connection was last seen accepted (0: none since the drain began). */
  readonly lastNewConnectionMs: number;
  /** Reads in a row that found nothing there (refused, or cut before an answer). */
  readonly refusedReads?: number;
  /**
   * Only requests in flight count: the last one can end without closing its connection (an HTTP/2
   * stream, an idle connection left), which the socket count never shows.
   */
  readonly countingRequests?: boolean;
  /** What every read so far cost Envoy, each as readCostMs says. */
  readonly readsCostMs?: number;
  /** Some read so far was priced by how long it took alone, not by its size: see readCostWaitMs. */
  readonly readsCostTimed?: boolean;
}

/** `envoy-unreachable` is the reads' verdict, never the policy's. */
export type DrainDecision = 'wait' | Exclude<DrainResult, 'envoy-unreachable'>;

/**
 * Once the drain could finish, reads come as often as the distance to the threshold warrants:
 * every FAST_READ_INTERVAL_MS with one connection left above it, so Envoy is released within tens
 * of milliseconds of its last connection closing; END_GAME_GROWTH times slower for each further
 * connection (100 ms with two left, 400 ms with three), up to the check interval. Several
 * connections must close before the drain can end, so reading them fast buys nothing.
 */
export const FAST_READ_INTERVAL_MS = 25;
export const END_GAME_GROWTH = 4;

/** The delay between end-game reads with `over` connections above the threshold. */
export function endGameDelayMs(over: number, checkIntervalMs: number): number {
  return Math.min(checkIntervalMs, FAST_READ_INTERVAL_MS * END_GAME_GROWTH ** Math.max(0, over - 1));
}

/**
 * Envoy answers admin calls on its main thread, the one that applies its configuration: once the
 * reads so far cost it `cost`, the next comes no sooner than READ_COST_FACTOR times that into the
 * drain, so they take at most 1/READ_COST_FACTOR (5 %) of that thread however large its
 * configuration, even when that holds the drain past its earliest end. Reads of a few hundred
 * microseconds are not slowed; an expensive first read (a full one, on a thousand listeners) is
 * paid for by the wait that follows it.
 */
export const READ_COST_FACTOR = 20;

/**
 * What a read costs Envoy, from how long reads took: a full read (the first, and after listeners
 * changed) costs what it took; a steady one the least any steady read took, since on a busy node
 * most of a slow read is waiting, not Envoy's work.
 */
export function readCostMs(lastWasFull: boolean, lastMs: number, leastSteadyMs: number | undefined): number {
  return lastWasFull ? lastMs : Math.min(lastMs, leastSteadyMs ?? lastMs);
}

/**
 * How long the next read waits for the reads so far to keep to their share (READ_COST_FACTOR).
 * A cost known only from how long a read took (`readsCostTimed`) is mostly the node's load on a
 * busy node, so it holds the next read a check interval at most.
 */
export function readCostWaitMs(policy: DrainPolicy, now: DrainObservation): number {
  const waitMs = Math.max(0, READ_COST_FACTOR * (now.readsCostMs ?? 0) - now.elapsedMs);
  return now.readsCostTimed === true ? Math.min(policy.checkIntervalMs, waitMs) : waitMs;
}

/** With a quiet period, reads near the drain's earliest end come at least every quietPeriod / QUIET_READ_SHARE. */
export const QUIET_READ_SHARE = 4;

/**
 * With `--connections listeners`, once the drain could finish and at most HINT_MAX_OVER connections
 * hold it, the kernel's count of TCP sockets is read every HINT_POLL_MS with one connection above the
 * threshold (END_GAME_GROWTH times less often for each further one), and a socket fewer brings the
 * next admin read at once. The hint only says when to read: the read decides. Each look wakes the
 * process (about 0.2 ms of CPU for Node, measured), so it looks fast only when one close can end it:
 * one connection left, or, counting only requests in flight, any number of them (requests a
 * balancer sent together end together, and the close of their connections is the first sign).
 */
export const HINT_POLL_MS = 20;
export const HINT_MAX_OVER = 3;

/** How often the hint looks at the socket count with `over` connections above the threshold: 20, 80, 320 ms; counting requests, 20 ms. */
export function hintPollMs(over: number, countingRequests = false): number {
  return countingRequests ? HINT_POLL_MS : HINT_POLL_MS * END_GAME_GROWTH ** Math.max(0, over - 1);
}

/**
 * How long a read the hint asks for waits, `sinceReadMs` after the last read and `sinceHintReadMs`
 * after the last read the hint brought. Counting requests, any close wakes the hint (an idle
 * connection's too), so its reads come no sooner than FAST_READ_INTERVAL_MS after any read and
 * REQUESTS_END_GAME_MAX_MS after its own last one: reads stay at the requests' end-game pace
 * however many sockets close, and the first close after a quiet spell is read within a poll.
 * Counting connections, at most HINT_MAX_OVER closes matter, and each is read at once.
 */
export function hintReadDelayMs(countingRequests: boolean, sinceReadMs: number, sinceHintReadMs: number): number {
  if (!countingRequests) return 0;
  return Math.max(0, FAST_READ_INTERVAL_MS - sinceReadMs, REQUESTS_END_GAME_MAX_MS - sinceHintReadMs);
}

/**
 * Counting only requests in flight, what ends the drain is requests ending: many can end at once
 * (long requests a balancer sent together), and one can end without closing its connection (an
 * HTTP/2 stream), which the socket-count hint never shows. So reads come at least this often
 * whatever the count, and at the end-game pace below it.
 */
export const REQUESTS_END_GAME_MAX_MS = FAST_READ_INTERVAL_MS * END_GAME_GROWTH;

export function requestsEndGameDelayMs(over: number, checkIntervalMs: number): number {
  return Math.min(endGameDelayMs(over, checkIntervalMs), REQUESTS_END_GAME_MAX_MS);
}

/** With the hint on and one connection left, the admin reads that catch what the hint missed: this share of the check interval. */
export const SAFETY_NET_SHARE = 4;

/** Whether the socket-count hint is worth its looks now: the drain could finish, and few connections hold it, or requests in flight do. */
export function hintWanted(policy: DrainPolicy, now: DrainObservation): boolean {
  if (now.connections === undefined || now.elapsedMs < earliestFinishMs(policy, now.lastNewConnectionMs)) return false;
  const over = now.connections - policy.exitAtConnections;
  return over > 0 && (now.countingRequests === true || over <= HINT_MAX_OVER);
}

/** The end-game delay while the hint watches: a safety net, slow enough that the hint does the fast part. */
export function safetyNetDelayMs(over: number, checkIntervalMs: number): number {
  return over <= 1 ? Math.max(FAST_READ_INTERVAL_MS, Math.min(checkIntervalMs, checkIntervalMs / SAFETY_NET_SHARE)) : checkIntervalMs;
}

/** The earliest moment the drain may finish: minimum drain and quiet period both over. */
export function earliestFinishMs(policy: DrainPolicy, lastNewConnectionMs: number): number {
  return policy.quietPeriodMs === 0 ? policy.minDrainMs : Math.max(policy.minDrainMs, lastNewConnectionMs + policy.quietPeriodMs);
}

/**
 * Reads in a row that find nothing listening (connection refused, or cut before any answer) after
 * which Envoy is taken to have exited: its connections are gone with it, so the drain ends. Only
 * these count: an answer of any kind (a 5xx, a redirect, a body that is not the stats) or a read
 * that times out means something is alive there, and the count is unknown, not zero.
 */
export const GONE_AFTER_REFUSED_READS = 3;
/** After a refused read the next one comes this soon: a dead Envoy is recognised within about 0.5 s. */
export const REFUSED_READ_INTERVAL_MS = 250;
/** A read in flight at the drain timeout gets at least this long before it is cut. */
export const LAST_READ_MIN_MS = 500;

/** Starting the drain (its admin calls, retried) gives up after this long, or one --admin-timeout if longer. */
export const START_GIVE_UP_MS = 3_000;
const START_RETRY_BASE_MS = 250;
const START_RETRY_MAX_MS = 1_000;

/** When starting the drain gives up: the documented bound of "no drain could start". */
export function startGiveUpMs(adminTimeoutMs: number): number {
  return Math.max(START_GIVE_UP_MS, adminTimeoutMs);
}

/** Pause before attempt `attempt + 1` of a start call: 0.25 s, 0.5 s, then 1 s. */
export function startRetryDelayMs(attempt: number): number {
  return Math.min(START_RETRY_BASE_MS * 2 ** (attempt - 1), START_RETRY_MAX_MS);
}

/** The bound of one read: --admin-timeout, cut so that a hanging Envoy cannot stretch the drain timeout. */
export function readTimeoutMs(policy: DrainPolicy, elapsedMs: number, adminTimeoutMs: number): number {
  return Math.min(adminTimeoutMs, Math.max(LAST_READ_MIN_MS, policy.drainTimeoutMs - elapsedMs));
}

/** Envoy is gone: enough reads in a row found nothing listening. */
export function envoyGone(refusedReads: number): boolean {
  return refusedReads >= GONE_AFTER_REFUSED_READS;
}

export function decideDrain(policy: DrainPolicy, now: DrainObservation): DrainDecision {
  const mayFinish = now.elapsedMs >= earliestFinishMs(policy, now.lastNewConnectionMs);
  const underThreshold = now.connections !== undefined && now.connections <= policy.exitAtConnections;
  if (mayFinish && underThreshold) return 'drained';
  if (now.elapsedMs >= policy.drainTimeoutMs) return 'timeout';
  return 'wait';
}

/**
 * Milliseconds until the next read: never past the timeout, nor past the moment the drain may
 * finish unless the reads' share of Envoy's main thread holds it (below).
 * `hinted`: the socket-count hint watches (see hintWanted), so the end-game reads are a safety net.
 * `flushWindowMs`: with `--connections total`, when the next stats flush may come (flush-timing.ts):
 * the count cannot drop before it, so end-game reads wait for it, at most a check interval at a time.
 * Whatever the phase, no sooner than READ_COST_FACTOR times what the reads so far cost Envoy
 * (readCostWaitMs); a cost known only from how long reads took never holds the read at the earliest end.
 */
export function nextReadDelay(policy: DrainPolicy, now: DrainObservation, hinted = false, flushWindowMs?: number): number {
  let delay = policy.checkIntervalMs;
  const untilMayFinish = earliestFinishMs(policy, now.lastNewConnectionMs) - now.elapsedMs;
  if (untilMayFinish > 0) {
    // Wake exactly when the drain may first finish.
    delay = Math.min(delay, untilMayFinish);
    // A request or connection seen at a read is dated to that read: once new ones could still
    // move the end past the minimum drain, reads come often enough that the quiet period is
    // overrun by a share of itself at most, whatever the check interval.
    if (policy.quietPeriodMs > 0 && now.elapsedMs + delay > policy.minDrainMs - policy.quietPeriodMs) {
      delay = Math.min(delay, Math.max(FAST_READ_INTERVAL_MS, policy.quietPeriodMs / QUIET_READ_SHARE));
    }
  } else if (now.connections !== undefined) {
    const over = now.connections - policy.exitAtConnections;
    const endGame =
      now.countingRequests === true
        ? requestsEndGameDelayMs(over, policy.checkIntervalMs)
        : hinted
          ? safetyNetDelayMs(over, policy.checkIntervalMs)
          : endGameDelayMs(over, policy.checkIntervalMs);
    delay = Math.min(delay, Math.max(endGame, (flushWindowMs ?? 0) - now.elapsedMs));
  }
  delay = Math.max(delay, readCostWaitMs(policy, now));
  if (untilMayFinish > 0 && now.readsCostTimed === true) delay = Math.min(delay, untilMayFinish);
  // Confirm or rule out a dead Envoy quickly, whatever the phase.
  if ((now.refusedReads ?? 0) > 0) delay = Math.min(delay, REFUSED_READ_INTERVAL_MS);
  return Math.max(0, Math.min(delay, policy.drainTimeoutMs - now.elapsedMs));
}

/**
 * New connections between two readings of an accepted-connections counter. A counter that went
 * down was reset (a hot restart): everything it counts since then is new.
 */
export function newConnectionsBetween(previous: number | undefined, current: number): number {
  if (previous === undefined) return 0;
  return current >= previous ? current - previous : current;
}
