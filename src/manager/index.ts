// The `shutdown-manager` sidecar: the HTTP server holding GET /shutdown/ready until the ready file
// appears (server.ts, ready-watch.ts), its settings and their checks (manager-settings.ts, manager-config.ts), the hook token, the drain
// watchdog and its log summary.
export { runManager } from './manager-command.js';
