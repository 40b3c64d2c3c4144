import { describe, expect, it } from 'vitest';
import {
  FAST_READ_INTERVAL_MS,
  GONE_AFTER_REFUSED_READS,
  HINT_MAX_OVER,
  LAST_READ_MIN_MS,
  REFUSED_READ_INTERVAL_MS,
  START_GIVE_UP_MS,
  decideDrain,
  earliestFinishMs,
  envoyGone,
  REQUESTS_END_GAME_MAX_MS,
  hintPollMs,
  hintReadDelayMs,
  hintWanted,
  readTimeoutMs,
  startGiveUpMs,
  startRetryDelayMs,
  newConnectionsBetween,
  nextReadDelay,
  READ_COST_FACTOR,
  readCostMs,
  readCostWaitMs,
  type DrainPolicy,
} from '../../../src/drain/policy.js';

const policy: DrainPolicy = { minDrainMs: 10_000, drainTimeoutMs: 60_000, exitAtConnections: 0, checkIntervalMs: 1_000, quietPeriodMs: 0 };
const quiet: DrainPolicy = { ...policy, minDrainMs: 2_000, quietPeriodMs: 5_000 };

const at = (elapsedMs: number, connections: number | undefined, lastNewConnectionMs = 0) => ({ elapsedMs, connections, lastNewConnectionMs });

describe('decideDrain', () => {
  it.each([
    // elapsed, connections, decision
    [0, 0, 'wait'], // the minimum drain always runs its course
    [9_999, 0, 'wait'],
    [10_000, 0, 'drained'],
    [10_000, 1, 'wait'],
    [30_000, undefined, 'wait'], // no reading: never "drained"
    [59_999, 5, 'wait'],
    [60_000, 5, 'timeout'],
    [60_000, 0, 'drained'], // the last read at the deadline still counts
    [60_000, undefined, 'timeout'],
    [120_000, 3, 'timeout'],
  ] as const)('after %d ms with %s connections: %s', (elapsed, connections, decision) => {
    expect(decideDrain(policy, at(elapsed, connections))).toBe(decision);
  });

  it.each([
    [10, 'drained'],
    [11, 'wait'],
  ] as const)('exit-at-connections 10 with %d connections: %s', (connections, decision) => {
    expect(decideDrain({ ...policy, exitAtConnections: 10 }, at(20_000, connections))).toBe(decision);
  });

  it('a zero minimum drain finishes at the first read at the threshold', () => {
    expect(decideDrain({ ...policy, minDrainMs: 0 }, at(0, 0))).toBe('drained');
  });

  it('ignores new connections while the quiet period is off', () => {
    expect(decideDrain(policy, at(10_000, 0, 9_999))).toBe('drained');
  });

  it.each([
    // elapsed, connections, last new connection, decision
    [2_000, 0, 0, 'wait'], // minimum drain over, quiet period (from the start) not yet
    [5_000, 0, 0, 'drained'], // nothing new since the drain began
    [6_000, 0, 3_000, 'wait'], // a new connection at 3 s restarted the quiet period
    [8_000, 0, 3_000, 'drained'],
    [8_000, 1, 3_000, 'wait'], // quiet but not drained
    [59_000, 0, 58_000, 'wait'],
    [60_000, 0, 58_000, 'timeout'], // the timeout bounds the quiet period too
  ] as const)('quiet period 5 s: after %d ms, %d connections, new at %d ms: %s', (elapsed, connections, lastNew, decision) => {
    expect(decideDrain(quiet, at(elapsed, connections, lastNew))).toBe(decision);
  });
});

describe('earliestFinishMs', () => {
  it.each([
    [policy, 0, 10_000],
    [quiet, 0, 5_000],
    [quiet, 4_000, 9_000],
    [{ ...quiet, minDrainMs: 20_000 }, 4_000, 20_000],
  ] as const)('%#', (p, lastNew, expected) => {
    expect(earliestFinishMs(p, lastNew)).toBe(expected);
  });
});

describe('nextReadDelay', () => {
  it.each([
    // elapsed, connections, delay
    [0, 50, 1_000], // the check interval
    [9_500, 0, 500], // wake exactly at the end of the minimum drain
    [9_999, 0, 1],
    [10_000, 50, 1_000], // many left: normal cadence
    [10_000, 1, FAST_READ_INTERVAL_MS], // one close away: read fast
    [10_000, 2, FAST_READ_INTERVAL_MS * 4], // two left: slower
    [10_000, 3, FAST_READ_INTERVAL_MS * 16],
    [10_000, 4, 1_000], // capped at the check interval
    [10_000, undefined, 1_000], // the last read failed: normal cadence
    [59_990, 50, 10], // never past the timeout
    [60_000, 50, 0],
    [70_000, 50, 0],
  ] as const)('after %d ms with %s connections: %d ms', (elapsed, connections, delay) => {
    expect(nextReadDelay(policy, at(elapsed, connections))).toBe(delay);
  });

  it('the end-game cadence counts from the threshold', () => {
    expect(nextReadDelay({ ...policy, exitAtConnections: 10 }, at(20_000, 11))).toBe(FAST_READ_INTERVAL_MS);
    expect(nextReadDelay({ ...policy, exitAtConnections: 10 }, at(20_000, 12))).toBe(FAST_READ_INTERVAL_MS * 4);
  });

  it('a check interval shorter than the fast interval is kept', () => {
    expect(nextReadDelay({ ...policy, checkIntervalMs: 10 }, at(20_000, 0))).toBe(10);
  });

  it('wakes when the quiet period would end, and reads at the normal cadence until then', () => {
    expect(nextReadDelay(quiet, at(7_600, 0, 3_000))).toBe(400);
    expect(nextReadDelay(quiet, at(4_000, 0, 3_000))).toBe(1_000);
    expect(nextReadDelay(quiet, at(8_000, 0, 3_000))).toBe(FAST_READ_INTERVAL_MS);
  });

  it('reads at least every quarter of the quiet period while new traffic could still move the end, whatever the check interval', () => {
    const slow: DrainPolicy = { ...policy, minDrainMs: 0, quietPeriodMs: 2_000, checkIntervalMs: 5_000 };
    expect(nextReadDelay(slow, at(0, 3, 0))).toBe(500);
    expect(nextReadDelay(slow, at(1_800, 3, 0))).toBe(200);
    // A minimum drain far away: new traffic now cannot move the end, so reads keep the cadence.
    const long: DrainPolicy = { ...slow, minDrainMs: 20_000 };
    expect(nextReadDelay(long, at(1_000, 3, 0))).toBe(5_000);
    expect(nextReadDelay(long, at(17_000, 3, 0))).toBe(500);
  });
});

describe("what a read costs Envoy's main thread", () => {
  it('keeps the reads so far to 1/READ_COST_FACTOR of the drain, slower than the check interval when they cost that much', () => {
    const oneLeft = { ...at(10_000, 1), countingRequests: true };
    expect(nextReadDelay(policy, { ...oneLeft, readsCostMs: 20 })).toBe(FAST_READ_INTERVAL_MS); // a small configuration: not slowed
    expect(nextReadDelay(policy, { ...oneLeft, readsCostMs: 506 })).toBe(506 * READ_COST_FACTOR - 10_000); // a thousand listeners
    expect(nextReadDelay(policy, { ...oneLeft, readsCostMs: 1_000 })).toBe(1_000 * READ_COST_FACTOR - 10_000); // past the check interval
    expect(nextReadDelay(policy, { ...at(0, 50), readsCostMs: 60 })).toBe(1_200);
  });

  it('holds a read the socket-count hint asks for as long (readCostWaitMs)', () => {
    expect(readCostWaitMs(policy, { ...at(10_000, 1), readsCostMs: 506 })).toBe(120);
    expect(readCostWaitMs(policy, { ...at(10_000, 1), readsCostMs: 20 })).toBe(0);
    expect(readCostWaitMs(policy, { ...at(10_000, 1), readsCostMs: 5_000 })).toBe(90_000);
  });

  it('holds the read the drain may first finish at for a costly first read, never past the timeout', () => {
    // A full read of a thousand listeners priced at 100 ms: the drain may end at 1 s, reads at 2 s.
    expect(nextReadDelay({ ...policy, minDrainMs: 1_000 }, { ...at(80, 2), readsCostMs: 100 })).toBe(1_920);
    expect(nextReadDelay(policy, { ...at(9_950, 0), readsCostMs: 1_000 })).toBe(10_050);
    expect(nextReadDelay(policy, { ...at(59_990, 1), readsCostMs: 5_000 })).toBe(10);
  });

  it('holds a read at most a check interval, and never at the earliest end, for a cost known only from how long reads took', () => {
    const timed = { readsCostTimed: true, readsCostMs: 5_000 };
    expect(readCostWaitMs(policy, { ...at(10_000, 1), ...timed })).toBe(1_000);
    expect(nextReadDelay(policy, { ...at(10_000, 1), countingRequests: true, ...timed })).toBe(1_000);
    expect(nextReadDelay(policy, { ...at(9_950, 0), ...timed, readsCostMs: 1_000 })).toBe(50);
  });

  it('takes a full read at what it took, a steady one at the least any steady read took (on a busy node a slow read is mostly waiting)', () => {
    expect(readCostMs(true, 50, 1)).toBe(50);
    expect(readCostMs(false, 9, 1)).toBe(1);
    expect(readCostMs(false, 0.8, 1)).toBe(0.8);
    expect(readCostMs(false, 9, undefined)).toBe(9);
  });
});

describe('nextReadDelay while the socket-count hint watches', () => {
  it('reads at the safety net when a close is what ends the drain, at the end-game pace when a request ending is', () => {
    expect(nextReadDelay(policy, at(10_000, 1), true)).toBe(250);
    // An HTTP/2 stream can end with its connection left open: no socket closes, so the hint cannot tell.
    expect(nextReadDelay(policy, { ...at(10_000, 1), countingRequests: true }, true)).toBe(FAST_READ_INTERVAL_MS);
  });

  it('counting requests, reads at least every 100 ms whatever the count: many can end at once', () => {
    expect(nextReadDelay(policy, { ...at(10_000, 16), countingRequests: true })).toBe(FAST_READ_INTERVAL_MS * 4);
    expect(nextReadDelay(policy, { ...at(10_000, 2), countingRequests: true })).toBe(FAST_READ_INTERVAL_MS * 4);
    expect(nextReadDelay(policy, at(10_000, 16))).toBe(1_000);
  });
});

describe('nextReadDelay with the next stats flush timed', () => {
  it.each([
    // elapsed, connections, when the next flush's window opens, delay
    [10_000, 1, 13_000, 1_000], // far off: one read per check interval
    [12_500, 1, 13_000, 500], // wake when the window opens
    [13_000, 1, 13_000, FAST_READ_INTERVAL_MS], // in the window: the end-game pace
    [14_000, 1, 13_000, FAST_READ_INTERVAL_MS], // past it, the flush not seen yet: still the end-game pace
    [10_000, 3, 10_200, FAST_READ_INTERVAL_MS * 16], // never faster than the end game's own pace
    [9_500, 1, 13_000, 500], // still wakes when the drain may first finish
    [10_000, undefined, 13_000, 1_000], // the count unknown: the check interval, as before
    [59_900, 1, 70_000, 100], // never past the timeout
  ] as const)('after %d ms with %s connections, the window at %d ms: %d ms', (elapsed, connections, windowMs, delay) => {
    expect(nextReadDelay(policy, at(elapsed, connections), false, windowMs)).toBe(delay);
  });

  it('leaves a dead Envoy to be confirmed quickly', () => {
    expect(nextReadDelay(policy, { ...at(10_000, 1), refusedReads: 1 }, false, 13_000)).toBe(REFUSED_READ_INTERVAL_MS);
  });
});

describe('the socket-count hint', () => {
  it.each([
    // elapsed, connections, wanted
    [9_000, 1, false], // before the minimum drain: reads feed progress lines, at the check interval
    [10_000, 0, false], // nothing above the threshold: the drain is over
    [10_000, 1, true],
    [10_000, HINT_MAX_OVER, true],
    [10_000, HINT_MAX_OVER + 1, false], // many left: they close one by one, the check interval reads them
    [10_000, undefined, false], // unknown is not "few"
  ] as const)('after %d ms with %s connections: %s', (elapsed, connections, wanted) => {
    expect(hintWanted(policy, at(elapsed, connections))).toBe(wanted);
  });

  it('counts from the threshold, and waits for the quiet period', () => {
    expect(hintWanted({ ...policy, exitAtConnections: 10 }, at(20_000, 11))).toBe(true);
    expect(hintWanted({ ...policy, exitAtConnections: 10 }, at(20_000, 10))).toBe(false);
    expect(hintWanted(quiet, at(7_000, 1, 3_000))).toBe(false);
    expect(hintWanted(quiet, at(8_000, 1, 3_000))).toBe(true);
  });

  it.each([
    // elapsed, connections, delay: the admin reads while the hint watches are a slow safety net
    [10_000, 1, 250],
    [10_000, 2, 1_000],
    [10_000, 3, 1_000],
    [9_500, 1, 500], // still wakes when the drain may first finish
    [59_900, 1, 100], // and never past the timeout
  ] as const)('hinted, after %d ms with %s connections: %d ms', (elapsed, connections, delay) => {
    expect(nextReadDelay(policy, at(elapsed, connections), true)).toBe(delay);
  });

  it('scales the safety net with the check interval, never below the fast interval nor above the interval', () => {
    expect(nextReadDelay({ ...policy, checkIntervalMs: 20_000 }, at(20_000, 1), true)).toBe(5_000);
    expect(nextReadDelay({ ...policy, checkIntervalMs: 40 }, at(20_000, 1), true)).toBe(FAST_READ_INTERVAL_MS);
    expect(nextReadDelay({ ...policy, checkIntervalMs: 10 }, at(20_000, 1), true)).toBe(10);
  });

  it('looks at the socket count fast only when one close can end the drain', () => {
    expect([1, 2, 3].map((over) => hintPollMs(over))).toEqual([20, 80, 320]);
  });

  it('counting requests, watches whatever their number, fast: requests sent together end together', () => {
    const requests = (elapsed: number, inFlight: number) => ({ ...at(elapsed, inFlight), countingRequests: true });
    expect(hintWanted(policy, requests(10_000, HINT_MAX_OVER + 5))).toBe(true);
    expect(hintWanted(policy, requests(10_000, 0))).toBe(false);
    expect(hintWanted(policy, requests(9_000, 4))).toBe(false); // before the drain may end
    expect([1, 4, 8].map((over) => hintPollMs(over, true))).toEqual([20, 20, 20]);
  });

  it.each([
    // counting requests, since the last read, since the last hint read, delay
    [false, 0, 0, 0], // counting connections: at most a few closes matter, each read at once
    [true, 0, Infinity, FAST_READ_INTERVAL_MS], // never closer than the fast pace to the read before
    [true, 10, Infinity, FAST_READ_INTERVAL_MS - 10],
    [true, 60, Infinity, 0], // the first close after a quiet spell: read at once
    [true, 30, 30, REQUESTS_END_GAME_MAX_MS - 30], // a stream of closes: reads at the requests' end-game pace
    [true, 30, REQUESTS_END_GAME_MAX_MS, 0],
  ] as const)('a read the hint asks for, counting requests %s, %d ms after a read and %d ms after a hint read, waits %d ms', (counting, sinceRead, sinceHint, delay) => {
    expect(hintReadDelayMs(counting, sinceRead, sinceHint)).toBe(delay);
  });

  it('leaves a dead Envoy to be confirmed quickly', () => {
    expect(nextReadDelay(policy, { ...at(20_000, undefined), refusedReads: 1 }, true)).toBe(REFUSED_READ_INTERVAL_MS);
  });
});

describe('a dead Envoy, a hanging Envoy and the start of the drain', () => {
  it('takes Envoy for gone only after several refused reads in a row, read in quick succession', () => {
    expect(envoyGone(GONE_AFTER_REFUSED_READS - 1)).toBe(false);
    expect(envoyGone(GONE_AFTER_REFUSED_READS)).toBe(true);
    expect(nextReadDelay(policy, { ...at(2_000, undefined), refusedReads: 1 })).toBe(REFUSED_READ_INTERVAL_MS);
    // Refused reads in a row take well under the minimum drain to conclude.
    expect((GONE_AFTER_REFUSED_READS - 1) * REFUSED_READ_INTERVAL_MS).toBeLessThanOrEqual(1_000);
  });

  it('never lets a hanging read stretch the drain timeout beyond a last short read', () => {
    expect(readTimeoutMs(policy, 0, 2_000)).toBe(2_000);
    expect(readTimeoutMs(policy, 59_000, 2_000)).toBe(1_000);
    expect(readTimeoutMs(policy, 60_000, 2_000)).toBe(LAST_READ_MIN_MS);
    expect(readTimeoutMs(policy, 59_000, 200)).toBe(200);
  });

  it('gives up starting the drain after 3 s, or one admin timeout if longer; backoff 0.25, 0.5, 1, 1 s', () => {
    expect(startGiveUpMs(2_000)).toBe(START_GIVE_UP_MS);
    expect(startGiveUpMs(10_000)).toBe(10_000);
    expect([1, 2, 3, 4].map(startRetryDelayMs)).toEqual([250, 500, 1_000, 1_000]);
  });
});

describe('newConnectionsBetween', () => {
  it.each([
    [undefined, 10, 0], // the first reading is the baseline
    [10, 10, 0],
    [10, 13, 3],
    [10, 4, 4], // the counter was reset (hot restart): all of it is new
  ] as const)('%s -> %d: %d new', (previous, current, expected) => {
    expect(newConnectionsBetween(previous, current)).toBe(expected);
  });
});
