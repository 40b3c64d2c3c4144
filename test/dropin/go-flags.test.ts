// The peers' flag syntax: what cobra/pflag and kingpin accept, and what they refuse.
import { describe, expect, it } from 'vitest';
import { type FlagSpecs, parseFlags, parseGoDuration, parseGoInt } from '../../src/dropin/go-flags.js';
import { UsageError } from '../../src/shared/errors.js';

const SPECS: FlagSpecs = {
  'drain-timeout': { kind: 'duration', fallback: '60s' },
  'exit-at-connections': { kind: 'int', fallback: '0' },
  'ready-file': { kind: 'string', fallback: '/admin/ok' },
};

describe('Go durations', () => {
  it.each([
    ['1m30s', 90_000],
    ['2m0s', 120_000],
    ['1h0m0s', 3_600_000],
    ['400ms', 400],
    ['0s', 0],
    ['0', 0],
    ['1.5s', 1_500],
    ['-5s', -5_000],
  ])('%s is %i ms', (text, ms) => expect(parseGoDuration(text)).toBe(ms));

  it.each(['10', '1x', '', 's', '--1s'])('refuses %j', (text) => expect(() => parseGoDuration(text)).toThrow(UsageError));
});

describe('Go integers', () => {
  it.each([
    ['0', 0],
    ['12', 12],
    ['-1', -1],
    ['0x10', 16],
    ['010', 8],
    ['1_000', 1_000],
  ])('%s is %i', (text, value) => expect(parseGoInt(text)).toBe(value));

  it.each(['1.5', 'ten', '', '1e3'])('refuses %j', (text) => expect(() => parseGoInt(text)).toThrow(UsageError));
});

describe('flags', () => {
  it('takes --flag=value and --flag value, the last one winning, and fills defaults', () => {
    const { values } = parseFlags(['--drain-timeout=30s', '--ready-file', '/admin/done', '--drain-timeout', '1m30s'], SPECS);
    expect(Object.fromEntries(values)).toEqual({ 'drain-timeout': 90_000, 'exit-at-connections': 0, 'ready-file': '/admin/done' });
  });

  it('an empty value after = is a value', () => {
    expect(parseFlags(['--ready-file='], SPECS).values.get('ready-file')).toBe('');
  });

  it.each([
    [['--bogus'], 'unknown flag: --bogus'],
    [['-x'], 'unknown shorthand flag'],
    [['--drain-timeout'], 'flag needs an argument: --drain-timeout'],
    [['--drain-timeout=10'], 'invalid argument "10" for --drain-timeout'],
    [['--exit-at-connections=many'], 'invalid argument "many" for --exit-at-connections'],
  ])('%j fails with %j', (args, message) => {
    expect(() => parseFlags(args, SPECS)).toThrow(message);
  });

  it('reports help and leftover words', () => {
    expect(parseFlags(['-h', 'extra'], SPECS)).toMatchObject({ help: true, words: ['extra'] });
  });
});
