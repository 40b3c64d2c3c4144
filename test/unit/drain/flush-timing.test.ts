import { describe, expect, it } from 'vitest';
import { FLUSH_LEAD_MS, MIN_TIMED_PERIOD_MS, NO_FLUSHES, type FlushLog, type FlushSighting, flushPeriodMs, flushWindowStartMs, noteRead } from '../../../src/drain/flush-timing.js';
import { FAST_READ_INTERVAL_MS, type DrainPolicy, nextReadDelay } from '../../../src/drain/policy.js';

const sighting = (fromMs: number, toMs: number, stepS: number): FlushSighting => ({ fromMs, toMs, stepS });

describe('noteRead', () => {
  it('records a sighting from the start of the read before to the end of the read that saw uptime move', () => {
    let log: FlushLog = NO_FLUSHES;
    log = noteRead(log, { startMs: 0, endMs: 2, uptimeS: 100 });
    log = noteRead(log, { startMs: 1_000, endMs: 1_002, uptimeS: 100 });
    expect(log.sightings).toEqual([]);
    log = noteRead(log, { startMs: 2_000, endMs: 2_003, uptimeS: 105 });
    expect(log.sightings).toEqual([sighting(1_000, 2_003, 5)]);
  });

  it('forgets every sighting when uptime goes back (another Envoy process)', () => {
    let log = noteRead(noteRead(NO_FLUSHES, { startMs: 0, endMs: 1, uptimeS: 100 }), { startMs: 10, endMs: 11, uptimeS: 105 });
    log = noteRead(log, { startMs: 20, endMs: 21, uptimeS: 3 });
    expect(log.sightings).toEqual([]);
  });
});

describe('flushPeriodMs', () => {
  it.each([
    // sightings, period bounds
    ['none', [], undefined],
    // One narrow sighting: uptime moved 5 s, so the period is within (4, 6) s.
    ['one 5 s step, 25 ms wide', [sighting(0, 25, 5)], { lo: 4_000, hi: 6_000 }],
    // A 5 s step over a 5 s wide sighting may hold several flushes: no bound.
    ['one 5 s step, 5 s wide', [sighting(0, 5_000, 5)], undefined],
    // A 1 s step bounds nothing by itself; two narrow sightings bound it by time.
    ['two narrow 1 s steps', [sighting(0, 25, 1), sighting(1_000, 1_025, 1)], { lo: 975, hi: 1_025 }],
    ['two narrow 5 s steps', [sighting(0, 25, 5), sighting(5_000, 5_025, 5)], { lo: 4_975, hi: 5_025 }],
    // Three sightings: the first and the last, two periods apart, narrow it further.
    ['a wide one, then two narrow', [sighting(0, 1_000, 5), sighting(5_400, 5_425, 5), sighting(10_400, 10_425, 5)], { lo: 4_975, hi: 5_025 }],
    // A busy Envoy stretched the last gap: the shortest gap bounds the period, the stretched one is left out.
    ['irregular: 5 s, then 7 s', [sighting(0, 25, 5), sighting(5_000, 5_025, 5), sighting(12_000, 12_025, 7)], { lo: 4_975, hi: 5_025 }],
  ] as const)('%s', (_name, sightings, period) => {
    expect(flushPeriodMs(sightings)).toEqual(period);
  });

  it('times a flush only when its period is surely over a second or so', () => {
    expect(flushWindowStartMs({ last: undefined, sightings: [sighting(0, 25, 1), sighting(1_000, 1_025, 1)] })).toBeUndefined();
    expect(flushWindowStartMs({ last: undefined, sightings: [sighting(0, 25, 2), sighting(2_000, 2_025, 2)] })).toBe(2_000 + 1_975 - FLUSH_LEAD_MS);
    expect(MIN_TIMED_PERIOD_MS).toBeGreaterThan(1_000);
  });
});

/** Envoy's flushes on the drain clock, and server.uptime as each sets it (whole seconds since Envoy started). */
interface Envoy {
  readonly flushesMs: readonly number[];
  readonly startedMs: number;
}

function uptimeAt(envoy: Envoy, atMs: number): number {
  const last = envoy.flushesMs.filter((f) => f <= atMs).at(-1) ?? envoy.startedMs;
  return Math.floor((last - envoy.startedMs) / 1_000);
}

/** Flushes `periodsMs` apart from `firstMs`, and the one a period before it (Envoy flushed before the drain too). */
function flushesEvery(periodsMs: readonly number[], firstMs: number): number[] {
  const out = [firstMs - (periodsMs[0] as number), firstMs];
  for (const p of periodsMs) out.push((out.at(-1) as number) + p);
  return out;
}

const endGame: DrainPolicy = { minDrainMs: 10_000, drainTimeoutMs: 10_000_000, exitAtConnections: 0, checkIntervalMs: 1_000, quietPeriodMs: 0 };

/**
 * A drain with one connection left over the threshold, each read taking 1 ms: every read's start
 * time. As with real Envoy, the count is unknown until uptime moved (a flush after the drain began).
 */
function drain(envoy: Envoy, untilMs: number, timed: boolean): number[] {
  const reads: number[] = [];
  let log = NO_FLUSHES;
  for (let t = 0; t < untilMs; ) {
    reads.push(t);
    log = noteRead(log, { startMs: t, endMs: t + 1, uptimeS: uptimeAt(envoy, t) });
    const now = { elapsedMs: t + 1, connections: log.sightings.length > 0 ? 1 : undefined, lastNewConnectionMs: 0 };
    t += 1 + nextReadDelay(endGame, now, false, timed ? flushWindowStartMs(log) : undefined);
  }
  return reads;
}

/** For each flush in the end game after the drain's first (which the count waits for at the regular cadence): how long until a read saw it. */
function lags(envoy: Envoy, reads: readonly number[], untilMs: number): number[] {
  const first = envoy.flushesMs.find((f) => f > 0) as number;
  return envoy.flushesMs.filter((f) => f > first && f >= endGame.minDrainMs && f < untilMs - 1_000).map((f) => (reads.find((r) => r >= f) as number) - f);
}

const regular = (periodMs: number, count: number): number[] => Array.from({ length: count }, () => periodMs);

describe('reads timed to the flushes (simulated Envoy, one connection left for the whole end game)', () => {
  it.each([
    // name, periods between flushes, first flush, end of the drain, most end-game reads allowed with timing
    ['1 s flush: not timed, read as before', regular(1_003, 120), 400, 60_000, Infinity],
    ['5 s flush', regular(5_001, 24), 3_300, 120_000, 400],
    ['60 s flush', regular(60_002, 9), 42_000, 540_000, 1_000],
    ['irregular: a flush 2 s late, one 3 s late', [5_000, 5_000, 7_000, 5_000, 5_000, 8_000, 5_000, 5_000, 5_000, 5_000, 5_000, 5_000], 2_100, 75_000, 700],
    // Flushes stop for 30 s (Envoy's main thread busy): the window opens, nothing comes, reads stay fast until it does.
    ['prediction missed: 30 s without a flush', [5_000, 5_000, 5_000, 30_000, 5_000, 5_000, 5_000, 5_000], 2_100, 75_000, 1_500],
  ] as const)('%s', (name, periods, firstMs, untilMs, maxReads) => {
    const envoy = { flushesMs: flushesEvery(periods, firstMs), startedMs: -123_456 };
    const before = drain(envoy, untilMs, false);
    const after = drain(envoy, untilMs, true);
    const endGameReads = (reads: readonly number[]): number => reads.filter((r) => r >= endGame.minDrainMs).length;
    // Never later than reading every 25 ms: each flush is seen within one fast read.
    for (const lag of lags(envoy, after, untilMs)) expect(lag).toBeLessThanOrEqual(FAST_READ_INTERVAL_MS + 1.5);
    expect(endGameReads(after)).toBeLessThanOrEqual(Math.min(maxReads, endGameReads(before)));
    if (name.startsWith('1 s')) expect(after).toEqual(before);
    // Between flushes, the wait is at most a check interval (progress lines and new connections as before).
    const gaps = after.slice(1).map((r, i) => r - (after[i] as number));
    expect(Math.max(...gaps)).toBeLessThanOrEqual(endGame.checkIntervalMs + 1.5); // + the 1 ms read, and float rounding
  });

  it('the prediction missed: past the window, reads come every 25 ms until the flush is seen', () => {
    const envoy = { flushesMs: flushesEvery([5_000, 5_000, 5_000, 30_000, 5_000], 2_100), startedMs: -50_000 };
    const reads = drain(envoy, 60_000, true);
    // The stall: the flush expected near 22.1 s comes at 47.1 s.
    const during = reads.filter((r) => r > 23_000 && r < 47_000);
    const gaps = during.slice(1).map((r, i) => r - (during[i] as number));
    expect(gaps.every((gap) => gap === FAST_READ_INTERVAL_MS + 1)).toBe(true);
  });
});
