// The `install` command: copies the executable and the runtime libraries it links against
// (found by reading its ELF headers) into a shared volume, for Envoy's container to run.
export { runInstall } from './install-command.js';
