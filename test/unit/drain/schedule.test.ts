import { describe, expect, it } from 'vitest';
import type { DrainPolicy } from '../../../src/drain/policy.js';
import {
  FAST_READ_INTERVAL_MS,
  HINT_MAX_OVER,
  HINT_POLL_MS,
  nextRead,
  PROGRESS_SHARE,
  READ_SHARE,
  REFUSED_READ_INTERVAL_MS,
  REQUESTS_END_GAME_MAX_MS,
  type ScheduleInput,
} from '../../../src/drain/schedule.js';

const policy: DrainPolicy = { minDrainMs: 10_000, drainTimeoutMs: 60_000, exitAtConnections: 0, checkIntervalMs: 1_000, quietPeriodMs: 0 };
const quiet: DrainPolicy = { ...policy, minDrainMs: 2_000, quietPeriodMs: 5_000 };

/** A drain at `elapsedMs` whose reads cost Envoy nothing worth counting, no socket count. */
const at = (elapsedMs: number, connections: number | undefined, more: Partial<ScheduleInput> = {}): ScheduleInput => ({
  elapsedMs,
  lastReadMs: elapsedMs,
  connections,
  lastNewConnectionMs: 0,
  refusedReads: 0,
  countingRequests: false,
  spentMs: 0,
  priceMs: 0,
  socketsReadable: false,
  ...more,
});

describe('nextRead: the cadence and the end game', () => {
  it.each([
    // elapsed, connections, in, why
    [0, 50, 1_000, 'cadence'],
    [9_500, 0, 500, 'may-finish'], // wakes exactly when the drain may first finish
    [9_999, 0, 1, 'may-finish'],
    [10_000, 50, 1_000, 'end-game'], // many left: the check interval
    [10_000, 1, FAST_READ_INTERVAL_MS, 'end-game'], // one close away: fast
    [10_000, 2, FAST_READ_INTERVAL_MS * 4, 'end-game'],
    [10_000, 3, FAST_READ_INTERVAL_MS * 16, 'end-game'],
    [10_000, 4, 1_000, 'end-game'], // capped at the check interval
    [10_000, undefined, 1_000, 'cadence'], // the last read failed
    [59_990, 50, 10, 'timeout'], // never past the timeout
    [60_000, 50, 0, 'timeout'],
    [70_000, 50, 0, 'timeout'],
  ] as const)('after %d ms with %s connections: in %d ms (%s)', (elapsed, connections, inMs, why) => {
    const next = nextRead(policy, at(elapsed, connections));
    expect({ inMs: next.atMs - elapsed, why: next.why }).toEqual({ inMs, why });
  });

  it('counts the end game from the threshold', () => {
    expect(nextRead({ ...policy, exitAtConnections: 10 }, at(20_000, 11)).atMs).toBe(20_000 + FAST_READ_INTERVAL_MS);
    expect(nextRead({ ...policy, exitAtConnections: 10 }, at(20_000, 12)).atMs).toBe(20_000 + FAST_READ_INTERVAL_MS * 4);
  });

  it('keeps a check interval shorter than the fast interval', () => {
    expect(nextRead({ ...policy, checkIntervalMs: 10 }, at(20_000, 1)).atMs).toBe(20_010);
  });

  it('reads again soon after a refused read, whatever the phase, to confirm a dead Envoy', () => {
    expect(nextRead(policy, at(2_000, undefined, { refusedReads: 1 }))).toEqual({ atMs: 2_000 + REFUSED_READ_INTERVAL_MS, why: 'refused' });
    expect(nextRead(policy, at(20_000, undefined, { refusedReads: 2, spentMs: 5_000 })).atMs).toBe(20_000 + REFUSED_READ_INTERVAL_MS);
  });
});

describe('nextRead with a quiet period', () => {
  it('wakes when the quiet period would end, at the cadence until then', () => {
    expect(nextRead(quiet, at(7_600, 0, { lastNewConnectionMs: 3_000 }))).toEqual({ atMs: 8_000, why: 'may-finish' });
    expect(nextRead(quiet, at(4_000, 0, { lastNewConnectionMs: 3_000 })).atMs).toBe(5_000);
  });

  it('reads every quarter of it while new traffic could still move the end, whatever the check interval', () => {
    const slow: DrainPolicy = { ...policy, minDrainMs: 0, quietPeriodMs: 2_000, checkIntervalMs: 5_000 };
    expect(nextRead(slow, at(0, 3))).toEqual({ atMs: 500, why: 'quiet-period' });
    expect(nextRead(slow, at(1_800, 3))).toEqual({ atMs: 2_000, why: 'may-finish' });
    // A minimum drain far away: new traffic now cannot move the end, so reads keep the cadence.
    const long: DrainPolicy = { ...slow, minDrainMs: 20_000 };
    expect(nextRead(long, at(1_000, 3)).atMs).toBe(6_000);
    expect(nextRead(long, at(17_000, 3))).toEqual({ atMs: 17_500, why: 'quiet-period' });
  });
});

describe("nextRead keeps the reads to their share of Envoy's main thread", () => {
  it('before the drain may finish, to half of the share: slower than the check interval when reads are dear', () => {
    // 107 ms a read (10,000 clusters): one read made, the next must wait until 214 ms are 2 % of the drain.
    const next = nextRead({ ...policy, minDrainMs: 30_000 }, at(1_000, 3, { spentMs: 107, priceMs: 107 }));
    expect(next).toEqual({ atMs: 214 / PROGRESS_SHARE, why: 'cadence' });
    // With the earliest end sooner than that, the next read is the one the drain may end at.
    expect(nextRead(policy, at(1_000, 3, { spentMs: 107, priceMs: 107 }))).toEqual({ atMs: 10_000, why: 'may-finish' });
  });

  it('the read the drain may finish at keeps to the whole share, and waits for it', () => {
    expect(nextRead(policy, at(9_000, 0, { spentMs: 214, priceMs: 107 }))).toEqual({ atMs: 10_000, why: 'may-finish' });
    expect(nextRead(policy, at(9_000, 0, { spentMs: 400, priceMs: 107 }))).toEqual({ atMs: 507 / READ_SHARE, why: 'share' });
  });

  it('holds end-game reads, and the ones a closed socket brings, to the share', () => {
    const next = nextRead(policy, at(12_000, 1, { spentMs: 500, priceMs: 50, socketsReadable: true }));
    expect(next.why).toBe('share');
    expect(next.atMs).toBe(550 / READ_SHARE);
    expect(next.watch?.earliestMs).toBe(550 / READ_SHARE);
  });

  it('never holds a read past the drain timeout', () => {
    expect(nextRead(policy, at(50_000, 1, { spentMs: 5_000, priceMs: 100 }))).toEqual({ atMs: 60_000, why: 'timeout' });
  });

  it("costs nothing on a small configuration: reads of a few tenths of a millisecond keep the end game's pace", () => {
    expect(nextRead(policy, at(10_000, 1, { spentMs: 30, priceMs: 0.3 })).atMs).toBe(10_000 + FAST_READ_INTERVAL_MS);
  });
});

describe('nextRead with the socket count watched', () => {
  const watched = (connections: number, more: Partial<ScheduleInput> = {}) => nextRead(policy, at(20_000, connections, { socketsReadable: true, ...more }));

  it('watches when a close can end the drain: fast with one connection left, slower with more, not at all past HINT_MAX_OVER', () => {
    expect(watched(1).watch).toEqual({ pollMs: HINT_POLL_MS, earliestMs: 0 });
    expect(watched(2).watch?.pollMs).toBe(HINT_POLL_MS * 4);
    expect(watched(HINT_MAX_OVER + 1).watch).toBeUndefined();
  });

  it('leaves the regular reads as a safety net, a quarter of the check interval', () => {
    expect(watched(1).atMs).toBe(20_250);
    expect(watched(2).atMs).toBe(20_250);
  });

  it('counting requests: watches whatever their number, fast, and reads at least every 100 ms (an HTTP/2 stream ends without a close)', () => {
    const next = watched(50, { countingRequests: true, lastReadMs: 19_990 });
    expect(next.watch).toEqual({ pollMs: HINT_POLL_MS, earliestMs: 19_990 + FAST_READ_INTERVAL_MS });
    expect(next.atMs).toBe(20_000 + REQUESTS_END_GAME_MAX_MS);
    expect(nextRead(policy, at(20_000, 50, { countingRequests: true })).atMs).toBe(20_000 + REQUESTS_END_GAME_MAX_MS);
  });

  it('never watches before the drain may finish', () => {
    expect(nextRead(policy, at(5_000, 1, { socketsReadable: true })).watch).toBeUndefined();
  });
});
