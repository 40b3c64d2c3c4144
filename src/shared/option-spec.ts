// The shape of a command's one option table (drain/drain-config.ts, manager/manager-settings.ts,
// status/status-config.ts), the values a parse of it yields, typed from the table itself, and what
// follows from a table alone: the values from the environment, the defaults, the variables' names.
// Commander (cli/program.ts) hands the actions these values without a cast.

import type { LogFormat, LogLevel } from './log.js';
import { fromEnv } from './parsers.js';

/**
 * `value`: takes an argument, parsed by `parse`; `switch`: a boolean that an environment variable
 * can also set (`VAR=false` means false); `list`: repeatable; `negation`: a `--no-` flag;
 * `plain`: a flag without variable or default; `choice`: one of `choices`.
 */
type OptionKind = 'value' | 'switch' | 'list' | 'negation' | 'plain' | 'choice';

export interface OptionSpec {
  /** Commander's flags, e.g. `--drain-timeout <duration>`. */
  readonly flags: string;
  readonly kind: OptionKind;
  readonly env?: string;
  /** The default as a user would write it; parsed by `parse`. */
  readonly fallback?: string;
  /** The reference's default cell, when the plain default says too little. */
  readonly defaultDoc?: string;
  readonly parse?: (text: string, previous: never) => unknown;
  readonly choices?: readonly string[];
  /** One line for --help. */
  readonly help: string;
  /** The reference's meaning cell (Markdown); the help line when absent. */
  readonly doc?: string;
  /** How the value reads in the start-up log line and --dry-run (a duration as `10s`); plain otherwise. */
  readonly show?: (value: never) => string;
}

/** A table keyed by each option's attribute (`attributeOf(flags)`); a negation by its own name. */
export type OptionTable = Readonly<Record<string, OptionSpec>>;

/** What commander stores for one option: a negation of the table adds `false` to the option it negates. */
type ValueOf<T extends OptionTable, K extends keyof T> = ParsedValue<T[K]> | (`no${Capitalize<K & string>}` extends keyof T ? false : never);

type ParsedValue<S extends OptionSpec> = S extends { readonly kind: 'choice'; readonly choices: readonly (infer C)[] }
  ? C
  : S extends { readonly kind: 'plain' }
    ? true | undefined
    : S extends { readonly parse: (text: string, previous: never) => infer R }
      ? S extends { readonly kind: 'switch' | 'list' } | { readonly fallback: string }
        ? R
        : R | undefined
      : never;

/** The values of a parse, by attribute, as commander's `opts()` holds them. */
export type OptionValues<T extends OptionTable> = {
  readonly [K in keyof T as T[K] extends { readonly kind: 'negation' } ? never : K]: ValueOf<T, K>;
};

/** The long flag of `flags` (`--ready-file <path>` → `--ready-file`). */
function longFlag(flags: string): string {
  return flags.split(' ')[0] ?? flags;
}

/** The key commander stores an option's value under: `--no-ready-file` → `readyFile`. */
export function attributeOf(flags: string): string {
  return longFlag(flags)
    .replace(/^--(no-)?/, '')
    .replace(/-([a-z])/g, (_, letter: string) => letter.toUpperCase());
}

/** Where an option's value came from, in commander's words. */
export type OptionSource = 'cli' | 'env' | 'default';

/** What commander hands a command's action, as far as the actions read it. */
export interface ParsedCommand<Options> {
  /** By attribute (`adminAddress`), as commander's `opts()` holds them. */
  readonly options: Options;
  /** By option attribute; undefined for an option without a value (`dryRun` unset). */
  readonly sourceOf: (attribute: string) => OptionSource | undefined;
  /** Flags seen on the command line, negated ones included: `ready-file`, `no-ready-file`. */
  readonly seen: ReadonlySet<string>;
  readonly logLevel: LogLevel;
  readonly logFormat: LogFormat;
}

/** Options a variable can set: values, switches and lists (a negation, a plain flag or a choice has none). */
type Settable<T extends OptionTable> = {
  readonly [K in keyof T as T[K] extends { readonly env: string } ? K : never]: T[K];
};

/** Each variable of `table` by its option's attribute. */
export function envNames<T extends OptionTable>(table: T): { readonly [K in keyof Settable<T>]: string } {
  const names: Record<string, string> = {};
  for (const [key, spec] of Object.entries(table)) if (spec.env !== undefined) names[key] = spec.env;
  return names as { readonly [K in keyof Settable<T>]: string };
}

/**
 * The values `table` takes from `env` alone, with the defaults where a variable is unset: what
 * commander would give a command line without flags. Negations, plain flags and choices are left out.
 */
export function valuesFromEnv<T extends OptionTable>(table: T, env: NodeJS.ProcessEnv): Pick<OptionValues<T>, keyof Settable<T> & keyof OptionValues<T>> {
  const values: Record<string, unknown> = {};
  for (const [key, spec] of Object.entries(table)) {
    if (spec.env === undefined) continue;
    const text = env[spec.env];
    values[key] = text === undefined ? defaultValue(spec) : fromEnv(spec.env, text, (value) => parseWith(spec, value));
  }
  // Each key was set from its own row by the parser (or default) OptionValues<T> reads off that row.
  return values as Pick<OptionValues<T>, keyof Settable<T> & keyof OptionValues<T>>;
}

/** What an option holds when neither a flag nor a variable sets it, as commander's wiring gives it. */
export function defaultValue(spec: OptionSpec): unknown {
  switch (spec.kind) {
    case 'value':
      return spec.fallback === undefined ? undefined : parseWith(spec, spec.fallback);
    case 'switch':
      return false;
    case 'list':
      return [];
    case 'choice':
      return spec.fallback;
    case 'negation':
    case 'plain':
      return undefined;
  }
}

function parseWith(spec: OptionSpec, text: string): unknown {
  return spec.parse === undefined ? text : spec.parse(text, (spec.kind === 'list' ? [] : undefined) as never);
}
