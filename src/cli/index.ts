// Command-line wiring only: commander definitions (program.ts), the quick parse of a plain
// `shutdown` / `shutdown-manager` line from the same option tables (quick-parse.ts), help texts,
// option defaults and environment variables (config.ts), cross-flag checks. Each command's action
// is one call into its folder.
export { main } from './cli.js';
