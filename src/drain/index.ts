// The `shutdown` command: the drain sequence against Envoy (drain.ts, the I/O loop), its pure
// decisions (policy.ts, count.ts), its settings and their rules (drain-config.ts), and --dry-run
// (dry-run.ts).
export { runShutdown } from './shutdown-command.js';
