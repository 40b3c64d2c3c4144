// When Envoy's next stats flush is due, from the reads that saw server.uptime move. Pure: no
// clock, no I/O. With `--connections total` the count changes only at a flush (uptime too, in
// whole seconds), so end-game reads need to be fast only around the next one.

/** One good read's server.uptime, with when the read began and ended (drain clock, ms). */
export interface UptimeRead {
  readonly startMs: number;
  readonly endMs: number;
  readonly uptimeS: number;
}

/** Uptime moved by `stepS` between the read that began at `fromMs` and the one that ended at `toMs`: a flush fell in between. */
export interface FlushSighting {
  readonly fromMs: number;
  readonly toMs: number;
  readonly stepS: number;
}

export interface FlushLog {
  readonly last: UptimeRead | undefined;
  readonly sightings: readonly FlushSighting[];
}

export const NO_FLUSHES: FlushLog = { last: undefined, sightings: [] };
const KEPT_SIGHTINGS = 6;

/**
 * Below this period, flushes are not timed: uptime moves once a second whether Envoy flushes every
 * second or every 100 ms (or on each admin read), and only the latter refresh the count in between.
 */
export const MIN_TIMED_PERIOD_MS = 1_500;
/** Fast reads start this long before the earliest moment the next flush can come (timer jitter). */
export const FLUSH_LEAD_MS = 100;

export function noteRead(log: FlushLog, read: UptimeRead): FlushLog {
  const { last } = log;
  if (last === undefined || read.uptimeS === last.uptimeS) return { ...log, last: read };
  // Uptime went back: another Envoy process (a hot restart), whose flushes keep their own time.
  if (read.uptimeS < last.uptimeS) return { last: read, sightings: [] };
  const sighting = { fromMs: last.startMs, toMs: read.endMs, stepS: read.uptimeS - last.uptimeS };
  return { last: read, sightings: [...log.sightings, sighting].slice(-KEPT_SIGHTINGS) };
}

interface Range {
  readonly lo: number;
  readonly hi: number;
}

/**
 * Whether a sighting holds exactly one flush. One holding k >= 2 is at least (k - 1) periods wide
 * and moved uptime by under k periods + 1 s, so at least half of (step - 1) s wide: a narrower one
 * holds one. So does one narrower than the gap since the sighting before (a period is longer).
 */
function single(s: FlushSighting, before: FlushSighting | undefined): boolean {
  const widthMs = s.toMs - s.fromMs;
  return widthMs <= (s.stepS - 1) * 500 || (before !== undefined && widthMs < s.fromMs - before.toMs);
}

/**
 * Bounds on the flush period. Each gap between flushes is measured two ways: by the uptime step of
 * a sighting that holds one flush (uptime is whole seconds: the gap is within (step - 1, step + 1)
 * s), and by the time between two sightings over the flushes between them. A busy Envoy only
 * stretches a gap (its timer is set again after each flush), so the period is at most the
 * shortest gap, and at least the largest lower bound that does not exceed that: a stretched gap
 * never moves the next window later. Undefined when nothing bounds it.
 */
export function flushPeriodMs(sightings: readonly FlushSighting[]): Range | undefined {
  const gaps: Range[] = [];
  for (let j = 0; j < sightings.length; j += 1) {
    const later = sightings[j] as FlushSighting;
    // Earlier sightings i, as long as every one after i holds one flush: (j - i) gaps from i's last flush.
    for (let i = j - 1; i >= -1 && single(sightings[i + 1] as FlushSighting, sightings[i]); i -= 1) {
      if (i === j - 1) gaps.push({ lo: (later.stepS - 1) * 1_000, hi: (later.stepS + 1) * 1_000 });
      const earlier = sightings[i];
      if (earlier !== undefined) gaps.push({ lo: (later.fromMs - earlier.toMs) / (j - i), hi: (later.toMs - earlier.fromMs) / (j - i) });
    }
  }
  if (gaps.length === 0) return undefined;
  const hi = Math.min(...gaps.map((g) => g.hi));
  return { lo: Math.max(...gaps.map((g) => g.lo).filter((lo) => lo <= hi)), hi };
}

/** When end-game reads should turn fast for the next flush; undefined when flushes cannot be timed (read as usual). */
export function flushWindowStartMs(log: FlushLog): number | undefined {
  const period = flushPeriodMs(log.sightings);
  const latest = log.sightings.at(-1);
  if (period === undefined || latest === undefined || period.lo < MIN_TIMED_PERIOD_MS) return undefined;
  return latest.fromMs + period.lo - FLUSH_LEAD_MS;
}
