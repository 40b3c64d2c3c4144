import { describe, expect, it } from 'vitest';
import { FAST_READ_INTERVAL_MS, FAST_READ_MARGIN, decideDrain, nextReadDelay, type DrainPolicy } from '../../src/drain/policy.js';

const policy: DrainPolicy = { minDrainMs: 10_000, drainTimeoutMs: 60_000, exitAtConnections: 0, checkIntervalMs: 1_000 };

describe('decideDrain', () => {
  it.each([
    // elapsed, connections, decision
    [0, 0, 'wait'], // the minimum drain always runs its course
    [9_999, 0, 'wait'],
    [10_000, 0, 'drained'],
    [10_000, 1, 'wait'],
    [30_000, undefined, 'wait'], // no reading yet: never "drained"
    [59_999, 5, 'wait'],
    [60_000, 5, 'timeout'],
    [60_000, 0, 'drained'], // the last read at the deadline still counts
    [60_000, undefined, 'timeout'],
    [120_000, 3, 'timeout'],
  ] as const)('after %d ms with %s connections: %s', (elapsed, connections, decision) => {
    expect(decideDrain(policy, elapsed, connections)).toBe(decision);
  });

  it.each([
    [10, 'drained'],
    [11, 'wait'],
  ] as const)('exit-at-connections 10 with %d connections: %s', (connections, decision) => {
    expect(decideDrain({ ...policy, exitAtConnections: 10 }, 20_000, connections)).toBe(decision);
  });

  it('a zero minimum drain finishes at the first read at the threshold', () => {
    expect(decideDrain({ ...policy, minDrainMs: 0 }, 0, 0)).toBe('drained');
  });
});

describe('nextReadDelay', () => {
  it.each([
    // elapsed, connections, delay
    [0, 50, 1_000], // the check interval
    [9_500, 0, 500], // wake exactly at the end of the minimum drain
    [9_999, 0, 1],
    [10_000, 50, 1_000], // many left: normal cadence
    [10_000, FAST_READ_MARGIN, FAST_READ_INTERVAL_MS], // few left: read fast
    [10_000, FAST_READ_MARGIN + 1, 1_000],
    [10_000, undefined, 1_000], // the last read failed: normal cadence
    [59_990, 50, 10], // never past the timeout
    [60_000, 50, 0],
    [70_000, 50, 0],
  ] as const)('after %d ms with %s connections: %d ms', (elapsed, connections, delay) => {
    expect(nextReadDelay(policy, elapsed, connections)).toBe(delay);
  });

  it('the fast margin counts from the threshold', () => {
    expect(nextReadDelay({ ...policy, exitAtConnections: 10 }, 20_000, 10 + FAST_READ_MARGIN)).toBe(FAST_READ_INTERVAL_MS);
  });

  it('a check interval shorter than the fast interval is kept', () => {
    expect(nextReadDelay({ ...policy, checkIntervalMs: 10 }, 20_000, 0)).toBe(10);
  });
});
