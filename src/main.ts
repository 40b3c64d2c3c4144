// Entry point of the bundle and of the single executable. Order matters: signal handlers and
// the closed-output guard come first; the CLI (commander and every command) loads after them.
// Each command loads its own modules when it runs (dynamic imports, kept in the one bundle file):
// a preStop hook's start-up pays only for what its first admin request needs.

import { dispatch } from './dropin/dispatch.js';
import { endOutputQuietlyWhenClosed } from './shared/output.js';
import { captureTerminationSignals } from './shared/signals.js';

captureTerminationSignals();
endOutputQuietlyWhenClosed();

void dispatch(process.argv0, process.argv, (args) => import('./cli/cli.js').then(({ main }) => main(args))).then((code) => {
  // Logs are written synchronously, so nothing is lost by exiting now; exiting explicitly means
  // no stray handle (a keep-alive socket, a timer) can keep a finished hook alive.
  process.exit(code);
});
