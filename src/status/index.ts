// The `status` command: reads the hand-off files and Envoy's counts, and formats a report.
export { runStatus } from './status-command.js';
