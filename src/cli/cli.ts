// The command line's entry: a plain `shutdown` (the preStop hook) or `shutdown-manager` (the
// sidecar) goes straight to its action; every other command line, and anything unusual in those,
// goes through commander (program.ts), loaded only then.
import { managerAction } from './manager-action.js';
import { quickParse } from './quick-parse.js';
import { shutdownAction } from './shutdown-action.js';
import { SHORT_USAGE } from './help.js';
import { ExitCode, errorMessage, exitCodeFor } from '../shared/errors.js';

/** Runs the CLI and resolves to the process exit code. Never throws. */
export async function main(argv: readonly string[]): Promise<number> {
  if (argv.length === 0) {
    process.stderr.write(SHORT_USAGE);
    return ExitCode.Usage;
  }
  try {
    const quick = quickParse(argv, process.env);
    if (quick?.command === 'shutdown') return await shutdownAction(quick.parsed);
    if (quick?.command === 'shutdown-manager') return await managerAction(quick.parsed);
    const { runProgram } = await import('./program.js');
    return await runProgram(argv);
  } catch (error) {
    const code = exitCodeFor(error);
    process.stderr.write(`error: ${code === ExitCode.Unexpected ? 'unexpected failure: ' : ''}${errorMessage(error)}\n`);
    return code;
  }
}
