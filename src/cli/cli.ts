// The command line's entry: every command line goes through commander (program.ts); failures come
// back here, to one line on stderr and the exit code the README's table gives them.

import { ExitCode, errorMessage, exitCodeFor } from '../shared/errors.js';
import { SHORT_USAGE } from './help.js';
import { runProgram } from './program.js';

/** Runs the CLI and resolves to the process exit code. Never throws. */
export async function main(argv: readonly string[]): Promise<number> {
  if (argv.length === 0) {
    process.stderr.write(SHORT_USAGE);
    return ExitCode.Usage;
  }
  try {
    return await runProgram(argv);
  } catch (error) {
    const code = exitCodeFor(error);
    process.stderr.write(`error: ${code === ExitCode.Unexpected ? 'unexpected failure: ' : ''}${errorMessage(error)}\n`);
    return code;
  }
}
