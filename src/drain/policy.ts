// When a drain is finished. Pure: no clock, no I/O. When it reads next is schedule.ts's.
import type { DrainResult } from '../handoff/drain-result.js';

export interface DrainPolicy {
  /** Never finish before this much time has passed (load balancers are still deprogramming). */
  readonly minDrainMs: number;
  /** Always finish at this point, connections or not. */
  readonly drainTimeoutMs: number;
  /** Finished when the count is at or under this. */
  readonly exitAtConnections: number;
  /** The slowest cadence of reads (unless their share of Envoy's main thread holds them: schedule.ts), and of progress log lines. */
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
}

/** `envoy-unreachable` is the reads' verdict, never the policy's. */
export type DrainDecision = 'wait' | Exclude<DrainResult, 'envoy-unreachable'>;

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
 * New connections between two readings of an accepted-connections counter. A counter that went
 * down was reset (a hot restart): everything it counts since then is new.
 */
export function newConnectionsBetween(previous: number | undefined, current: number): number {
  if (previous === undefined) return 0;
  return current >= previous ? current - previous : current;
}
