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
}

export type DrainDecision = 'wait' | 'drained' | 'timeout';

/**
 * Reads come this often once the minimum drain has passed and the count is within
 * FAST_READ_MARGIN of the threshold, so Envoy is released within tens of milliseconds of its last
 * connection closing instead of up to a full check interval later. Costs at most 40 admin
 * requests a second, and only in the last moments of a drain.
 */
export const FAST_READ_INTERVAL_MS = 25;
export const FAST_READ_MARGIN = 5;

/** `connections` is undefined while no read has succeeded yet. */
export function decideDrain(policy: DrainPolicy, elapsedMs: number, connections: number | undefined): DrainDecision {
  const minimumPassed = elapsedMs >= policy.minDrainMs;
  const underThreshold = connections !== undefined && connections <= policy.exitAtConnections;
  if (minimumPassed && underThreshold) return 'drained';
  if (elapsedMs >= policy.drainTimeoutMs) return 'timeout';
  return 'wait';
}

/** Milliseconds until the next read, never past the minimum drain or the timeout. */
export function nextReadDelay(policy: DrainPolicy, elapsedMs: number, connections: number | undefined): number {
  let delay = policy.checkIntervalMs;
  const untilMinimum = policy.minDrainMs - elapsedMs;
  if (untilMinimum > 0) {
    // Wake exactly when the minimum drain ends: that is the earliest moment we may finish.
    delay = Math.min(delay, untilMinimum);
  } else if (connections !== undefined && connections <= policy.exitAtConnections + FAST_READ_MARGIN) {
    delay = Math.min(delay, FAST_READ_INTERVAL_MS);
  }
  return Math.max(0, Math.min(delay, policy.drainTimeoutMs - elapsedMs));
}
