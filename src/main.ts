// Entry point of the bundle and of the single executable.
import { main } from './cli.js';
import { dispatch } from './dropin/dispatch.js';

dispatch(process.argv0, process.argv, main).then((code) => {
  // Logs are written synchronously, so nothing is lost by exiting now; exiting explicitly means
  // no stray handle (a keep-alive socket, a timer) can keep a finished hook alive.
  process.exit(code);
});
