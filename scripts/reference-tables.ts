// The generated parts of docs/reference.md: each command's options table, rendered from its
// option table (`shutdown`'s in src/cli/shutdown-options.ts, the manager's in
// src/manager/manager-settings.ts). `generated` puts them in place; the docs test fails on any drift.

import { optionsMarkdown, SHUTDOWN_OPTIONS } from '../src/cli/shutdown-options.js';
import { MANAGER_SETTINGS } from '../src/manager/manager-settings.js';

export const REFERENCE_PAGE = 'docs/reference.md';
const TABLE_HEADER = '| flag | default | environment variable | meaning |';

/** Each generated table: the section heading it follows, and the table. */
export const GENERATED_TABLES: readonly { readonly heading: string; readonly table: string }[] = [
  { heading: '## `shutdown`', table: optionsMarkdown(Object.values(SHUTDOWN_OPTIONS)) },
  { heading: '## `shutdown-manager`', table: optionsMarkdown(Object.values(MANAGER_SETTINGS)) },
];

/** Where the options table of the section under `heading` sits in `page`, or undefined. */
export function tableSpan(page: string, heading: string): { start: number; end: number } | undefined {
  const section = page.indexOf(`\n${heading}\n`);
  if (section < 0) return undefined;
  const start = page.indexOf(TABLE_HEADER, section);
  const next = page.indexOf('\n## ', section + 1);
  if (start < 0 || (next >= 0 && start > next)) return undefined;
  const end = page.indexOf('\n\n', start);
  return { start, end: end < 0 ? page.length : end };
}

/** `page` with every generated table replaced by its current rendering. */
export function generated(page: string): string {
  let text = page;
  for (const { heading, table } of GENERATED_TABLES) {
    const span = tableSpan(text, heading);
    if (span === undefined) throw new Error(`${REFERENCE_PAGE}: no options table under ${heading}`);
    text = text.slice(0, span.start) + table + text.slice(span.end);
  }
  return text;
}
