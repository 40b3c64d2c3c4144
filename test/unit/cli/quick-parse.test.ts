// The quick parse of `shutdown` and `shutdown-manager` against commander itself, on generated
// command lines and environments: whatever the quick parse takes, commander takes too and hands
// the action exactly the same; whatever commander refuses (or answers with help), the quick parse
// leaves to it. And the plain forms a hook or a sidecar is written with are always taken.
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { buildProgram } from '../../../src/cli/program.js';
import { ENV } from '../../../src/cli/config.js';
import { MANAGER_OPTIONS } from '../../../src/cli/manager-options.js';
import { attributeOf, longFlag, type OptionSpec } from '../../../src/cli/option-spec.js';
import { quickParse, type ParsedCommand, type QuickParse } from '../../../src/cli/quick-parse.js';
import { SHUTDOWN_OPTIONS } from '../../../src/cli/shutdown-options.js';
import { STATUS_OPTIONS } from '../../../src/cli/status-options.js';
import { LOG_FORMATS, LOG_LEVELS } from '../../../src/shared/log.js';

type Command = QuickParse['command'];
const TABLES: Record<Command, readonly OptionSpec[]> = { shutdown: Object.values(SHUTDOWN_OPTIONS), 'shutdown-manager': Object.values(MANAGER_OPTIONS) };
const ALL_SPECS = [...TABLES.shutdown, ...TABLES['shutdown-manager']];
const ATTRIBUTES = [...new Set(ALL_SPECS.map((spec) => attributeOf(spec.flags)))];
const RUNS = 200;

/** Values of every kind the options take, good and bad: each option is tried with all of them. */
const TEXTS = [
  ...['0', '3', '19002', '70000', '-1', '1.5'],
  ...['0s', '5s', '250ms', '1m30s', '70s', '2h', 'x', '-1s', '5', ' 5s'],
  ...['true', 'false', 'yes', 'no', '1', 'TRUE', ''],
  ...['total', 'listeners', 'json', 'text', 'xml', 'debug', 'loud'],
  ...['127.0.0.1:9901', '[::1]:19000', 'unix:/run/envoy/admin.sock', 'http://127.0.0.1:1', '10.0.0.1:19000', 'localhost:1'],
  ...['/tmp/ready', '/tmp/', 'relative', 'stats', 'stats,ready', 'a,,b', '::1', '127.0.0.1', 'example.com'],
  ...['=', 'a\nb'],
];
/** Values that look like flags: commander reads them as the next option, never as a value. */
const DASHED = ['-', '--', '-x', '-1s', '--drain-timeout', '--port'];
const text = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom(...TEXTS) },
  { weight: 1, arbitrary: fc.constantFrom(...DASHED) },
  { weight: 1, arbitrary: fc.string({ maxLength: 6 }) },
);

/** The texts an option's own parser accepts, but for those that look like a flag (the quick parse leaves those to commander). */
function goodTexts(spec: OptionSpec): string[] {
  if (spec.kind === 'choice') return [...(spec.choices ?? [])];
  return TEXTS.filter((candidate) => {
    try {
      spec.parse?.(candidate, undefined as never);
      return !candidate.startsWith('-');
    } catch {
      return false;
    }
  });
}

/** A good value more often than not: a line with one bad value among six still gets tried whole. */
function mostlyGood(spec: OptionSpec): fc.Arbitrary<string> {
  const good = goodTexts(spec);
  return good.length === 0 ? text : fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...good) }, { weight: 1, arbitrary: text });
}

/** Every way a flag can be written, with any value. */
function anyForm(spec: OptionSpec): fc.Arbitrary<string[]> {
  const flag = longFlag(spec.flags);
  const value = mostlyGood(spec);
  return fc.oneof(
    fc.constant<string[]>([flag]),
    value.map((v) => [flag, v]),
    value.map((v) => [`${flag}=${v}`]),
  );
}

/** The forms the quick parse promises to take, with values the option's parser accepts. */
function plainForm(spec: OptionSpec): fc.Arbitrary<string[]> {
  const flag = longFlag(spec.flags);
  if (spec.kind === 'switch' || spec.kind === 'negation') return fc.constant<string[]>([flag]);
  const values = fc.constantFrom(...goodTexts(spec));
  return fc.oneof(
    values.map((value) => [flag, value]),
    values.map((value) => [`${flag}=${value}`]),
  );
}

/** Tokens that are no option of the command, or that commander treats specially. */
const ODD = fc.constantFrom(['--bogus'], ['extra'], ['--'], ['-h'], ['--help'], ['--log-level', 'debug'], ['--version'], ['--ready-file']);

/** The options a hook's or a sidecar's command line is written with: --dry-run and --output are for people. */
const HOT_KINDS: ReadonlySet<OptionSpec['kind']> = new Set(['value', 'list', 'switch', 'negation']);

function commandLine(command: Command, form: (spec: OptionSpec) => fc.Arbitrary<string[]>, odd: boolean): fc.Arbitrary<string[]> {
  const own = fc.constantFrom(...TABLES[command].filter((spec) => odd || HOT_KINDS.has(spec.kind))).chain(form);
  const token = odd ? fc.oneof({ weight: 6, arbitrary: own }, { weight: 1, arbitrary: fc.constantFrom(...ALL_SPECS).chain(form) }, { weight: 1, arbitrary: ODD }) : own;
  return fc.array(token, { maxLength: 6 }).map((tokens) => [command, ...tokens.flat()]);
}

/** Some of the command's variables (and the log ones), each with any value or with a good one. */
function environment(command: Command, good: boolean): fc.Arbitrary<Record<string, string>> {
  const entries = TABLES[command].flatMap((spec) => (spec.env === undefined ? [] : [[spec.env, good ? fc.constantFrom(...goodTexts(spec)) : mostlyGood(spec)] as const]));
  const logs = [
    [ENV.logLevel, fc.oneof({ weight: good ? 1 : 4, arbitrary: fc.constantFrom(...LOG_LEVELS) }, { weight: good ? 0 : 1, arbitrary: text })],
    [ENV.logFormat, fc.oneof({ weight: good ? 1 : 4, arbitrary: fc.constantFrom(...LOG_FORMATS) }, { weight: good ? 0 : 1, arbitrary: text })],
  ] as const;
  return fc.record(Object.fromEntries([...entries, ...logs]), { requiredKeys: [] }).map((env) => {
    const set: Record<string, string> = {};
    for (const [name, value] of Object.entries(env)) if (typeof value === 'string') set[name] = value;
    return set;
  });
}

const saved = { ...process.env };
function useEnv(env: Record<string, string>): void {
  for (const key of Object.keys(process.env)) if (key.startsWith('ENVOY_SHUTDOWN_')) delete process.env[key];
  Object.assign(process.env, env);
}
afterEach(() => {
  for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key];
  Object.assign(process.env, saved);
});

type Observed = { readonly command: string } & ParsedCommand<unknown>;

/** What commander hands the action, or undefined when it refuses the line or only prints help. */
async function viaCommander(args: readonly string[]): Promise<Observed | undefined> {
  let parsed: Observed | undefined;
  const program = buildProgram(() => undefined, {
    shutdown: (given) => {
      parsed = { ...given, command: 'shutdown' };
      return Promise.resolve(0);
    },
    manager: (given) => {
      parsed = { ...given, command: 'shutdown-manager' };
      return Promise.resolve(0);
    },
  });
  const quiet = { writeOut: () => undefined, writeErr: () => undefined };
  for (const command of [program, ...program.commands]) command.configureOutput(quiet);
  try {
    await program.parseAsync(args, { from: 'user' });
  } catch {
    return undefined;
  }
  return parsed;
}

function viaQuickParse(args: readonly string[], env: Record<string, string>): Observed | undefined {
  const quick = quickParse(args, env);
  return quick === undefined ? undefined : { ...quick.parsed, command: quick.command };
}

/** What the actions can observe of a parse. */
function observed(parsed: Observed): unknown {
  return {
    command: parsed.command,
    options: parsed.options,
    sources: Object.fromEntries(ATTRIBUTES.map((key) => [key, parsed.sourceOf(key)])),
    // Only shutdown's action reads it.
    seen: parsed.command === 'shutdown' ? ['ready-file', 'no-ready-file'].filter((flag) => parsed.seen.has(flag)) : [],
    log: [parsed.logLevel, parsed.logFormat],
  };
}

const command = fc.constantFrom<Command>('shutdown', 'shutdown-manager');
/** Lines of the forms and values a hook or sidecar is written with. */
const plainCase = command.chain((name) => fc.tuple(commandLine(name, plainForm, false), environment(name, true)));
/** Any form, odd tokens, other commands' flags, bad values in flags and variables. */
const anyCase = command.chain((name) => fc.tuple(commandLine(name, anyForm, true), environment(name, false)));

describe('quick parse against commander', () => {
  it('keys every row by the attribute commander stores it under, as the value types read them', () => {
    for (const table of [SHUTDOWN_OPTIONS, MANAGER_OPTIONS, STATUS_OPTIONS]) {
      for (const [key, spec] of Object.entries(table)) {
        const spelled = spec.kind === 'negation' ? `no${attributeOf(spec.flags).replace(/^./, (first) => first.toUpperCase())}` : attributeOf(spec.flags);
        expect(key).toBe(spelled);
      }
    }
  });

  it('takes only what commander takes, and then hands the action the same', async () => {
    let taken = 0;
    let refused = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(plainCase, anyCase),
        async ([args, env]) => {
          useEnv(env);
          const quick = viaQuickParse(args, env);
          const commander = await viaCommander(args);
          if (commander === undefined) refused += 1;
          if (quick === undefined) return;
          taken += 1;
          expect(commander, 'commander refused a line the quick parse took').toBeDefined();
          if (commander !== undefined) expect(observed(quick)).toEqual(observed(commander));
        },
      ),
      { numRuns: RUNS },
    );
    // Both outcomes were really tried, not one of them only.
    expect(taken).toBeGreaterThan(RUNS / 10);
    expect(refused).toBeGreaterThan(RUNS / 10);
  });

  it('takes every plain command line with good values, as commander does', async () => {
    await fc.assert(
      fc.asyncProperty(
        plainCase,
        async ([args, env]) => {
          useEnv(env);
          const quick = viaQuickParse(args, env);
          const commander = await viaCommander(args);
          // A table whose defaults or parsers commander refuses would make this fail, not skip.
          expect(commander).toBeDefined();
          expect(quick, 'a plain command line went to commander').toBeDefined();
          if (quick !== undefined && commander !== undefined) expect(observed(quick)).toEqual(observed(commander));
        },
      ),
      { numRuns: RUNS },
    );
  });
});
