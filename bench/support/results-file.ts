// bench/RESULTS.md: a header (date, machine, command) and one delimited section per scenario, so
// that running one scenario replaces its own section and leaves the others as they were.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';

export const RESULTS_FILE = 'bench/RESULTS.md';

export interface Section {
  readonly name: string;
  readonly markdown: string;
}

const HEADER = 'header';
const SECTION = /<!-- section:([\w-]+) -->\n([\s\S]*?)<!-- \/section:\1 -->\n?/g;

function wrap(name: string, markdown: string): string {
  return `<!-- section:${name} -->\n${markdown.trimEnd()}\n<!-- /section:${name} -->\n`;
}

function readSections(): Map<string, string> {
  const sections = new Map<string, string>();
  if (!existsSync(RESULTS_FILE)) return sections;
  for (const match of readFileSync(RESULTS_FILE, 'utf8').matchAll(SECTION)) sections.set(match[1] as string, match[2] as string);
  return sections;
}

/**
 * Writes the file. `header` undefined keeps the existing header (a partial run); sections not in
 * `fresh` are kept from the existing file, in `order`.
 */
export function writeResults(title: string, header: string | undefined, fresh: readonly Section[], order: readonly string[]): void {
  const existing = readSections();
  const headerText = header ?? existing.get(HEADER) ?? '_No full run recorded yet: run `npm run bench`._\n';
  const parts = [`# ${title}\n\n`, wrap(HEADER, headerText)];
  for (const name of order) {
    const markdown = fresh.find((section) => section.name === name)?.markdown ?? existing.get(name);
    if (markdown !== undefined) parts.push('\n', wrap(name, markdown));
  }
  writeFileSync(RESULTS_FILE, parts.join(''));
}
