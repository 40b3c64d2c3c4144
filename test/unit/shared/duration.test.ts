import { describe, expect, it } from 'vitest';
import { formatDuration, parseDuration } from '../../../src/shared/duration.js';
import { UsageError } from '../../../src/shared/errors.js';

describe('parseDuration (Go syntax)', () => {
  it.each([
    ['0', 0],
    ['0s', 0],
    ['250ms', 250],
    ['10s', 10_000],
    ['1m30s', 90_000],
    ['1h', 3_600_000],
    ['1h2m3s4ms', 3_723_004],
    ['1.5s', 1_500],
    ['.5s', 500],
    ['5.s', 5_000],
    ['+5s', 5_000],
    ['500us', 0.5],
    ['500µs', 0.5],
    ['1000000ns', 1],
    ['1s1s', 2_000],
  ])('%j is %d ms', (text, ms) => {
    expect(parseDuration(text)).toBeCloseTo(ms, 9);
  });

  it.each([
    ['', /empty duration/],
    [' 10s', /not a duration/],
    ['10s ', /not a duration/],
    ['10s\n', /not a duration/],
    ['5', /with a unit/],
    ['1.5', /with a unit/],
    ['5x', /not a duration/],
    ['s', /not a duration/],
    ['10 s', /not a duration/],
    ['1d', /not a duration/],
    ['-5s', /must not be negative/],
    ['5s-', /not a duration/],
    ['1e3s', /not a duration/],
    ['abc', /not a duration/],
    [`${'9'.repeat(400)}h`, /too large/],
  ])('%j is rejected', (text, message) => {
    expect(() => parseDuration(text)).toThrow(UsageError);
    expect(() => parseDuration(text)).toThrow(message);
  });
});

describe('formatDuration', () => {
  it.each([
    [0, '0s'],
    [250, '250ms'],
    [1_000, '1s'],
    [1_500, '1.5s'],
    [60_000, '1m0s'],
    [90_000, '1m30s'],
    [3_723_004, '1h2m3.004s'],
  ])('%d ms is %s', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });

  it('round-trips through parseDuration', () => {
    for (const ms of [1, 999, 1_000, 61_001, 7_200_000]) expect(parseDuration(formatDuration(ms))).toBe(ms);
  });
});
