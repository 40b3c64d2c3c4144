// The report formats of `status` and `shutdown --dry-run`: in a module of their own so the CLI
// can offer them without loading either command.
export type OutputFormat = 'text' | 'json';
export const OUTPUT_FORMATS: readonly OutputFormat[] = ['text', 'json'];
