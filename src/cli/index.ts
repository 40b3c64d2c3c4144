// Command-line wiring only: the option tables (a flag and help for each setting of the drain, the
// manager and `status`, whose variables and defaults live in their folders), commander
// definitions (program.ts), the quick parse of a plain `shutdown` / `shutdown-manager` line from
// the same tables (quick-parse.ts), help texts, the global log options and the list of every
// variable (config.ts), cross-flag checks. Each command's action is one call into its folder.
export { main } from './cli.js';
