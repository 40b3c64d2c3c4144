// Commander's wiring of every command: flags and environment variables to typed configs, each
// subcommand to one call.
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { MANAGER_SETTINGS, type ManagerOptions } from '../manager/manager-settings.js';
import { ExitCode, UsageError } from '../shared/errors.js';
import { defaultValue, type OptionSource, type OptionSpec, type OptionTable, type ParsedCommand } from '../shared/option-spec.js';
import { onTerminationSignal, signalExitCode } from '../shared/signals.js';
import { VERSION } from '../shared/version.js';
import { GLOBAL_OPTIONS, type GlobalOptions } from './config.js';
import { INSTALL_HELP, MANAGER_HELP, SHUTDOWN_HELP, STATUS_HELP } from './help.js';
import { managerAction } from './manager-action.js';
import { interruptSignal, shutdownAction } from './shutdown-action.js';
import { SHUTDOWN_OPTIONS, type ShutdownValues } from './shutdown-options.js';
import { STATUS_OPTIONS, type StatusValues } from './status-options.js';

/** Parses `argv` with commander and runs its command; resolves to the exit code. */
export async function runProgram(argv: readonly string[]): Promise<number> {
  let exitCode: number = ExitCode.Success;
  try {
    await buildProgram((code) => (exitCode = code)).parseAsync(argv, { from: 'user' });
    return exitCode;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : ExitCode.Usage;
    throw error;
  }
}

function buildProgram(setExitCode: (code: number) => void): Command {
  const program = new Command('envoy-shutdown-manager')
    .description('Drains an Envoy proxy before Kubernetes stops it.')
    .version(VERSION, '--version', 'print the version')
    .helpOption('-h, --help', 'show help')
    .exitOverride()
    .showSuggestionAfterError(true)
    .configureOutput({ outputError: (message, write) => write(firstLine(message)) });
  addOptions(program, GLOBAL_OPTIONS);
  addShutdown(program, setExitCode);
  addManager(program, setExitCode);
  addStatus(program, setExitCode);
  addInstall(program, setExitCode);
  return program;
}

function addShutdown(program: Command, setExitCode: (code: number) => void): void {
  // Flags seen on the command line, negated ones included: commander keeps only the last of two
  // that set the same value, so a contradiction would pass unnoticed.
  const seen = new Set<string>();
  const shutdown = program
    .command('shutdown')
    .on('option:ready-file', () => seen.add('ready-file'))
    .on('option:no-ready-file', () => seen.add('no-ready-file'))
    .summary("fail Envoy's health check, drain it, then write the ready file")
    .description(SHUTDOWN_HELP.description)
    .addHelpText('after', SHUTDOWN_HELP.after);
  addOptions(shutdown, SHUTDOWN_OPTIONS);
  shutdown.action(async (options: ShutdownValues, command: Command) => {
    setExitCode(await shutdownAction({ ...parsedBy(command), options, seen }));
  });
}

function addManager(program: Command, setExitCode: (code: number) => void): void {
  const manager = program
    .command('shutdown-manager')
    .summary("serve /shutdown/ready: hold Envoy's preStop hook until the drain has ended")
    .description(MANAGER_HELP.description)
    .addHelpText('after', MANAGER_HELP.after);
  addOptions(manager, MANAGER_SETTINGS);
  manager.action(async (options: ManagerOptions, command: Command) => {
    setExitCode(await managerAction({ ...parsedBy(command), options }));
  });
}

function addStatus(program: Command, setExitCode: (code: number) => void): void {
  const status = program.command('status').summary('report where Envoy and its drain stand').description(STATUS_HELP.description);
  addOptions(status, STATUS_OPTIONS);
  status.addHelpText('after', STATUS_HELP.after).action(async (options: StatusValues) => {
    const [{ statusConfig }, { runStatus }] = await Promise.all([import('../status/status-config.js'), import('../status/status-command.js')]);
    setExitCode(await runStatus(statusConfig(options), interruptSignal()));
  });
}

function addInstall(program: Command, setExitCode: (code: number) => void): void {
  program
    .command('install')
    .summary('copy this executable, its loader and libraries into a directory, to run in any container')
    .description(INSTALL_HELP.description)
    .argument('<dir>', 'where to install: an emptyDir shared with the Envoy container')
    .option('--mount-path <path>', 'where <dir> is mounted in the container that runs the hook, for the printed command (default: <dir>)')
    .addHelpText('after', INSTALL_HELP.after)
    .action(async (dir: string, options: { mountPath?: string }) => {
      // Nothing to stop in order: a signal ends the copy at once (a re-run cleans up after it).
      onTerminationSignal((signal) => process.exit(signalExitCode(signal)));
      const { installConfig, runInstall } = await import('../install/install-command.js');
      setExitCode(await runInstall(installConfig(dir, options.mountPath)));
    });
}

/** Each row of an option table as a commander option, in the table's order. */
function addOptions(command: Command, table: OptionTable): void {
  for (const spec of Object.values(table)) command.addOption(fromSpec(spec));
}

/** A commander option from its row in the option table. */
function fromSpec(spec: OptionSpec): Option {
  const parse = usage((spec.parse ?? String) as (text: string, previous: unknown) => unknown);
  switch (spec.kind) {
    case 'value':
      // No fallback: no value unless given (the manager's --host), the default only described.
      return new Option(spec.flags, spec.help)
        .env(spec.env ?? '')
        .argParser(parse)
        .default(defaultValue(spec), spec.fallback ?? spec.defaultDoc);
    case 'switch':
      return new Option(`${spec.flags} [boolean]`, spec.help)
        .env(spec.env ?? '')
        .preset('true')
        .argParser(parse)
        .default(defaultValue(spec));
    case 'list':
      return new Option(spec.flags, spec.help)
        .env(spec.env ?? '')
        .argParser(parse)
        .default(defaultValue(spec), spec.defaultDoc);
    case 'choice': {
      const option = new Option(spec.flags, spec.help).choices(spec.choices ?? []).default(defaultValue(spec));
      return spec.env === undefined ? option : option.env(spec.env);
    }
    case 'negation':
    case 'plain':
      return new Option(spec.flags, spec.help);
  }
}

/** Commander reports an argument parser's InvalidArgumentError as a one-line usage error. */
function usage<T, P>(parse: (text: string, previous: P) => T): (text: string, previous: P) => T {
  return (text, previous) => {
    try {
      return parse(text, previous);
    } catch (error) {
      if (error instanceof UsageError) throw new InvalidArgumentError(error.message);
      throw error;
    }
  };
}

/** What every action reads of a parse besides its own options. */
function parsedBy(command: Command): Omit<ParsedCommand<unknown>, 'options'> {
  const globals = command.optsWithGlobals<GlobalOptions>();
  const sourceOf = (attribute: string): OptionSource | undefined => command.getOptionValueSource(attribute) as OptionSource | undefined;
  return { sourceOf, seen: new Set(), logLevel: globals.logLevel, logFormat: globals.logFormat };
}

/** One line whatever the message holds: a value with a newline in it is shown escaped, not cut. */
function firstLine(message: string): string {
  const joined = message.trimEnd().replace(/\n\(Did you mean/g, ' (Did you mean');
  return `${joined.replace(/\r/g, '\\r').replace(/\n/g, '\\n')}\n`;
}
