// Entry point of the bundle and of the single executable. Order matters: signal handlers and
// the closed-output guard come first; the CLI (commander and every command) loads after them.
import { captureTerminationSignals } from './shared/signals.js';
import { endOutputQuietlyWhenClosed } from './shared/output.js';

captureTerminationSignals();
endOutputQuietlyWhenClosed();

void Promise.all([import('./cli/cli.js'), import('./dropin/dispatch.js')]).then(async ([{ main }, { dispatch }]) => {
  const code = await dispatch(process.argv0, process.argv, main);
  // Logs are written synchronously, so nothing is lost by exiting now; exiting explicitly means
  // no stray handle (a keep-alive socket, a timer) can keep a finished hook alive.
  process.exit(code);
});
