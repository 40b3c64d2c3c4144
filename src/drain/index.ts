// The `shutdown` command: the drain sequence against Envoy (drain.ts, the I/O loop), its pure
// decisions (policy.ts, count.ts), and --dry-run (dry-run.ts).
export { runShutdown } from './shutdown-command.js';
