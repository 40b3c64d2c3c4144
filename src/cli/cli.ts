// The command line's entry: a plain `shutdown` (the preStop hook) goes straight to its action;
// every other command line, and anything unusual in a `shutdown` one, goes through commander
// (program.ts), loaded only then.
import { quickShutdown } from './quick-shutdown.js';
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
    const quick = quickShutdown(argv, process.env);
    if (quick !== undefined) return await shutdownAction(quick);
    const { runProgram } = await import('./program.js');
    return await runProgram(argv);
  } catch (error) {
    const code = exitCodeFor(error);
    process.stderr.write(`error: ${code === ExitCode.Unexpected ? 'unexpected failure: ' : ''}${errorMessage(error)}\n`);
    return code;
  }
}
