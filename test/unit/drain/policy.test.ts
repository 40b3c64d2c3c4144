import { describe, expect, it } from 'vitest';
import {
  type DrainPolicy,
  decideDrain,
  earliestFinishMs,
  envoyGone,
  GONE_AFTER_REFUSED_READS,
  LAST_READ_MIN_MS,
  newConnectionsBetween,
  readTimeoutMs,
  START_GIVE_UP_MS,
  startGiveUpMs,
  startRetryDelayMs,
} from '../../../src/drain/policy.js';
import { REFUSED_READ_INTERVAL_MS } from '../../../src/drain/schedule.js';

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

describe('a dead Envoy, a hanging Envoy and the start of the drain', () => {
  it('takes Envoy for gone only after several refused reads in a row, read in quick succession', () => {
    expect(envoyGone(GONE_AFTER_REFUSED_READS - 1)).toBe(false);
    expect(envoyGone(GONE_AFTER_REFUSED_READS)).toBe(true);
    // Refused reads in a row (schedule.ts reads again after each) take well under the minimum drain to conclude.
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
