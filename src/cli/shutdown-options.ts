// `shutdown`'s options: the drain's settings (drain/drain-config.ts, each with its flag, variable,
// default and help) and the two that only the command line has, --dry-run and --output.
import { DRAIN_SETTINGS } from '../drain/drain-config.js';
import type { OptionSpec, OptionValues } from '../shared/option-spec.js';
import { OUTPUT_FORMATS } from '../shared/output-format.js';

export const SHUTDOWN_OPTIONS = {
  ...DRAIN_SETTINGS,
  dryRun: {
    flags: '--dry-run',
    kind: 'plain',
    help: 'print the effective configuration, the plan and the current counts; change nothing',
    doc: 'Print the effective configuration (and where each value came from), the steps a drain would take and the current counts; change nothing.',
  },
  output: {
    flags: '--output <format>',
    kind: 'choice',
    fallback: 'text',
    choices: OUTPUT_FORMATS,
    help: 'with --dry-run: text for people, json for scripts',
    doc: 'Format of `--dry-run` (`text` or `json`); refused without it.',
  },
} as const satisfies Readonly<Record<string, OptionSpec>>;

/** What a parse of `shutdown`'s command line hands its action. */
export type ShutdownValues = OptionValues<typeof SHUTDOWN_OPTIONS>;

/** An options table of docs/reference.md, row by row as the page holds it. */
export function optionsMarkdown(options: readonly OptionSpec[]): string {
  const cell = (text: string): string => text.replace(/\|/g, '\\|');
  const rows = options.map((option) => {
    const defaultCell = option.defaultDoc ?? (option.fallback !== undefined ? `\`${option.fallback}\`` : option.kind === 'switch' ? 'off' : '');
    const env = option.env === undefined ? '' : `\`${option.env}\``;
    const doc = option.doc ?? `${option.help.charAt(0).toUpperCase()}${option.help.slice(1)}.`;
    return `| \`${cell(option.flags)}\` | ${cell(defaultCell)} | ${env} | ${cell(doc)} |`;
  });
  return ['| flag | default | environment variable | meaning |', '|---|---|---|---|', ...rows].join('\n');
}
