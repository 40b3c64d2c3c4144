// Command-line wiring only: commander definitions, help texts, option defaults and environment
// variables (config.ts), cross-flag checks. Each command's action is one call into its folder.
export { main } from './cli.js';
