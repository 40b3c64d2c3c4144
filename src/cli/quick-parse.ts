// `shutdown` as a preStop hook runs it, and `shutdown-manager` as a sidecar runs it: flags of the
// plain `--name value` / `--name=value` / `--switch` forms, variables, defaults. Parsed here from
// the commands' option tables, without loading commander, which cost several milliseconds of the
// start-up, before the hook's first admin request and before the manager listens. Anything else
// (help, --dry-run, a bad or unknown flag, a bad variable, an unusual form) returns undefined and
// goes to commander, which owns every message and every refusal.
import { ENV, LOG_DEFAULTS } from './config.js';
import { MANAGER_OPTIONS, type ManagerValues } from './manager-options.js';
import { attributeOf, longFlag, type OptionSpec, type OptionTable, type OptionValues } from './option-spec.js';
import { SHUTDOWN_OPTIONS, type ShutdownValues } from './shutdown-options.js';
import { LOG_FORMATS, LOG_LEVELS, type LogFormat, type LogLevel } from '../shared/log.js';

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

export type QuickParse =
  | { readonly command: 'shutdown'; readonly parsed: ParsedCommand<ShutdownValues> }
  | { readonly command: 'shutdown-manager'; readonly parsed: ParsedCommand<ManagerValues> };

/** What commander would hand the command's action for `args`, or undefined to leave it to commander. */
export function quickParse(args: readonly string[], env: NodeJS.ProcessEnv): QuickParse | undefined {
  const command = args[0];
  if (command !== 'shutdown' && command !== 'shutdown-manager') return undefined;
  const logLevel = choiceFromEnv(env[ENV.logLevel], LOG_LEVELS, LOG_DEFAULTS.logLevel);
  const logFormat = choiceFromEnv(env[ENV.logFormat], LOG_FORMATS, LOG_DEFAULTS.logFormat);
  if (logLevel === undefined || logFormat === undefined) return undefined;
  if (command === 'shutdown') {
    const parsed = parseTable(SHUTDOWN_OPTIONS, args, env);
    return parsed && { command, parsed: { ...parsed, logLevel, logFormat } };
  }
  const parsed = parseTable(MANAGER_OPTIONS, args, env);
  return parsed && { command, parsed: { ...parsed, logLevel, logFormat } };
}

type TableParse<T extends OptionTable> = Omit<ParsedCommand<OptionValues<T>>, 'logLevel' | 'logFormat'>;

/** `args[0]` is the command; the rest are its flags, read against `table`. */
function parseTable<T extends OptionTable>(table: T, args: readonly string[], env: NodeJS.ProcessEnv): TableParse<T> | undefined {
  const specs: readonly OptionSpec[] = Object.values(table);
  const values: Record<string, unknown> = {};
  const sources = new Map<string, OptionSource>();
  const seen = new Set<string>();
  try {
    for (let index = 1; index < args.length; index += 1) {
      const arg = args[index] ?? '';
      const equals = arg.indexOf('=');
      const flag = equals === -1 ? arg : arg.slice(0, equals);
      const inline = equals === -1 ? undefined : arg.slice(equals + 1);
      const spec = specs.find((candidate) => longFlag(candidate.flags) === flag);
      if (spec === undefined) return undefined;
      const key = attributeOf(spec.flags);
      const next = args[index + 1];
      if (spec.kind === 'value' || spec.kind === 'list') {
        const text = inline ?? next;
        // A missing value, or one that looks like a flag: commander's call.
        if (text === undefined || (inline === undefined && text.startsWith('-'))) return undefined;
        if (inline === undefined) index += 1;
        // A repeated list flag collects: commander hands its parser the value so far.
        values[key] = parse(spec, text, sources.get(key) === 'cli' ? values[key] : spec.kind === 'list' ? [] : undefined);
      } else if (spec.kind === 'switch') {
        // `--switch false` or `--switch=no`: the optional value is commander's to read.
        if (inline !== undefined || (next !== undefined && !next.startsWith('-'))) return undefined;
        values[key] = parse(spec, 'true', undefined);
      } else if (spec.kind === 'negation' && inline === undefined) {
        values[key] = false;
      } else {
        return undefined;
      }
      sources.set(key, 'cli');
      seen.add(flag.slice(2));
    }
    for (const spec of specs) {
      const key = attributeOf(spec.flags);
      if (sources.get(key) === 'cli') continue;
      const text = spec.env === undefined ? undefined : env[spec.env];
      if (text !== undefined) {
        values[key] = parse(spec, text, spec.kind === 'list' ? [] : undefined);
        sources.set(key, 'env');
      } else if (hasDefault(spec)) {
        // Parsed only when used: the first parse of each kind of value costs compile time.
        values[key] = defaultOf(spec);
        sources.set(key, 'default');
      }
    }
  } catch {
    return undefined; // a value its parser refuses: commander words the error
  }
  // Each key was set above by its own row's parser (or default), which is what OptionValues<T>
  // reads off the same rows; the property test holds this against commander.
  return { options: values as OptionValues<T>, sourceOf: (key) => sources.get(key), seen };
}

function hasDefault(spec: OptionSpec): boolean {
  return spec.kind === 'switch' || spec.kind === 'list' || spec.kind === 'choice' || (spec.kind === 'value' && spec.fallback !== undefined);
}

function defaultOf(spec: OptionSpec): unknown {
  switch (spec.kind) {
    case 'value':
      return parse(spec, spec.fallback ?? '', undefined);
    case 'switch':
      return false;
    case 'list':
      return [];
    default:
      return spec.fallback;
  }
}

function parse(spec: OptionSpec, text: string, previous: unknown): unknown {
  return spec.parse === undefined ? text : spec.parse(text, previous as never);
}

function choiceFromEnv<T extends string>(text: string | undefined, choices: readonly T[], fallback: T): T | undefined {
  if (text === undefined) return fallback;
  return choices.find((choice) => choice === text);
}
