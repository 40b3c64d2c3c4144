// When a drain is finished, and when to look next. Pure: no clock, no I/O.

export interface DrainPolicy {
  /** Never finish before this much time has passed (load balancers are still deprogramming). */
  readonly minDrainMs: number;
  /** Always finish at this point, connections or not. */
  readonly drainTimeoutMs: number;
  /** Finished when the count is at or under this. */
  readonly exitAtConnections: number;
  /** The slowest cadence of reads, and of progress log lines. */
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
}

export type DrainDecision = 'wait' | 'drained' | 'timeout';

/**
 * Reads come this often once the drain could finish and the count is within FAST_READ_MARGIN of
 * the threshold, so Envoy is released within tens of milliseconds of its last connection closing
 * instead of up to a full check interval later. Costs at most 40 admin requests a second, and
 * only in the last moments of a drain.
 */
export const FAST_READ_INTERVAL_MS = 25;
export const FAST_READ_MARGIN = 5;

/** The earliest moment the drain may finish: minimum drain and quiet period both over. */
export function earliestFinishMs(policy: DrainPolicy, lastNewConnectionMs: number): number {
  return policy.quietPeriodMs === 0 ? policy.minDrainMs : Math.max(policy.minDrainMs, lastNewConnectionMs + policy.quietPeriodMs);
}

export function decideDrain(policy: DrainPolicy, now: DrainObservation): DrainDecision {
  const mayFinish = now.elapsedMs >= earliestFinishMs(policy, now.lastNewConnectionMs);
  const underThreshold = now.connections !== undefined && now.connections <= policy.exitAtConnections;
  if (mayFinish && underThreshold) return 'drained';
  if (now.elapsedMs >= policy.drainTimeoutMs) return 'timeout';
  return 'wait';
}

/** Milliseconds until the next read: never past the moment the drain may finish, nor the timeout. */
export function nextReadDelay(policy: DrainPolicy, now: DrainObservation): number {
  let delay = policy.checkIntervalMs;
  const untilMayFinish = earliestFinishMs(policy, now.lastNewConnectionMs) - now.elapsedMs;
  if (untilMayFinish > 0) {
    // Wake exactly when the drain may first finish.
    delay = Math.min(delay, untilMayFinish);
  } else if (now.connections !== undefined && now.connections <= policy.exitAtConnections + FAST_READ_MARGIN) {
    delay = Math.min(delay, FAST_READ_INTERVAL_MS);
  }
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
