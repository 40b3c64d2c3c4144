// stdout and stderr may be closed under us: `--help | head`, a log collector that went away.
// That ends our output, never the work, and never with a stack trace. Imports nothing, so the
// entry point can install it before loading the CLI.

const CLOSED = new Set(['EPIPE', 'ECONNRESET', 'EBADF']);

export function endOutputQuietlyWhenClosed(): void {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (!CLOSED.has(error.code ?? '')) throw error;
      // Later writes go nowhere instead of raising the same error again.
      stream.write = (() => true) as typeof stream.write;
    });
  }
}
