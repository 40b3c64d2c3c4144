// How a drain can end: the one list every table of results is keyed by (exit codes, metrics,
// Events, the peers' exit codes). `shutdown` writes the result into the ready file; the manager and
// `status` read it back.

export const DRAIN_RESULTS = ['drained', 'timeout', 'envoy-unreachable'] as const;
export type DrainResult = (typeof DRAIN_RESULTS)[number];

/** What the manager and `status` report for a ready file that holds no drain report (or an unknown result). */
export const UNKNOWN_RESULT = 'unknown';

export function isDrainResult(value: unknown): value is DrainResult {
  return DRAIN_RESULTS.some((result) => result === value);
}
