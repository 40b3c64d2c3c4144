// Flags as Envoy Gateway (cobra/pflag) and Contour (kingpin) read them: `--flag=value` or
// `--flag value`, the last occurrence wins, durations in Go's syntax (negative allowed, as Go
// allows), integers in Go's strconv syntax. Only the flags a command declares are accepted.
import { parseDuration } from '../shared/duration.js';
import { UsageError } from '../shared/errors.js';

type FlagKind = 'duration' | 'int' | 'string';

/** Each flag's kind and its default, written as the peer's help shows it. */
export type FlagSpecs = Readonly<Record<string, { readonly kind: FlagKind; readonly fallback: string }>>;

export type FlagValues = ReadonlyMap<string, number | string>;

export interface ParsedFlags {
  readonly values: FlagValues;
  readonly help: boolean;
  /** Words that are not flags nor flag values, in order. */
  readonly words: readonly string[];
}

/** Parses `args` against `specs`; any other flag is a usage error naming it. */
export function parseFlags(args: readonly string[], specs: FlagSpecs): ParsedFlags {
  const values = new Map<string, number | string>();
  for (const [name, spec] of Object.entries(specs)) values.set(name, parseValue(name, spec.kind, spec.fallback));
  const words: string[] = [];
  let help = false;
  for (let i = 0; i < args.length; i += 1) {
    const arg = args[i] as string;
    if (arg === '-h' || arg === '--help') {
      help = true;
      continue;
    }
    if (!arg.startsWith('-') || arg === '-') {
      words.push(arg);
      continue;
    }
    if (!arg.startsWith('--')) throw new UsageError(`unknown shorthand flag: ${JSON.stringify(arg)}`);
    const eq = arg.indexOf('=');
    const name = arg.slice(2, eq === -1 ? undefined : eq);
    const spec = specs[name];
    if (spec === undefined) throw new UsageError(`unknown flag: --${name}`);
    let text: string;
    if (eq !== -1) {
      text = arg.slice(eq + 1);
    } else {
      const next = args[i + 1];
      if (next === undefined) throw new UsageError(`flag needs an argument: --${name}`);
      text = next;
      i += 1;
    }
    values.set(name, parseValue(name, spec.kind, text));
  }
  return { values, help, words };
}

function parseValue(name: string, kind: FlagKind, text: string): number | string {
  try {
    if (kind === 'duration') return parseGoDuration(text);
    if (kind === 'int') return parseGoInt(text);
    return text;
  } catch (error) {
    if (error instanceof UsageError) throw new UsageError(`invalid argument ${JSON.stringify(text)} for --${name}: ${error.message}`);
    throw error;
  }
}

/** Go's time.ParseDuration, in milliseconds: `1m30s`, `250ms`, `-5s`, `0`. */
export function parseGoDuration(text: string): number {
  if (text.startsWith('-')) {
    const ms = parseDuration(text.slice(1));
    return ms === 0 ? 0 : -ms;
  }
  return parseDuration(text);
}

/** Go's strconv.ParseInt with base 0, as pflag and kingpin call it: decimal, 0x…, 0o…, 0b…, a sign. */
export function parseGoInt(text: string): number {
  const match = /^([+-]?)(0[xX][0-9a-fA-F_]+|0[oO]?[0-7_]+|0[bB][01_]+|[1-9][0-9_]*|0)$/.exec(text);
  if (match === null) throw new UsageError('not an integer');
  const digits = (match[2] as string).replaceAll('_', '');
  const value = /^0[0-7]+$/.test(digits) ? Number.parseInt(digits.slice(1), 8) : Number(digits.replace(/^0[oO]/, '0o'));
  if (!Number.isSafeInteger(value)) throw new UsageError('integer out of range');
  return match[1] === '-' ? -value : value;
}

/** A value parseFlags put there: its kind was checked against the same specs. */
export function durationFlag(values: FlagValues, name: string): number {
  return values.get(name) as number;
}

export function intFlag(values: FlagValues, name: string): number {
  return values.get(name) as number;
}

export function stringFlag(values: FlagValues, name: string): string {
  return values.get(name) as string;
}
