// The benchmark figures the README and the docs give are quotes of bench/RESULTS.md, rewritten from
// it (scripts/figure-quotes.ts), never numbers copied by hand.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { FIGURES, figure, QUOTING_PAGES, quotedNames, quoteFigures, RESULTS_PAGE } from '../../scripts/figure-quotes.js';

const RESULTS = readFileSync(RESULTS_PAGE, 'utf8');
const page = (path: string): string => readFileSync(path, 'utf8');
/** A measured size or duration as prose writes it: `10.1 MiB`, `57 ms`, `0.25 s`. */
const MEASURED = /\b\d+(?:\.\d+)? ?(?:MiB|MB|KB|KiB|ms)\b/g;

describe('figures quoted from bench/RESULTS.md', () => {
  it.each(QUOTING_PAGES)('%s quotes RESULTS.md as it is (node scripts/run-ts.mjs scripts/figures.ts rewrites it)', (path) => {
    const text = page(path);
    expect(quotedNames(text).length).toBeGreaterThan(0);
    expect(quoteFigures(text, RESULTS) === text, `run node scripts/run-ts.mjs scripts/figures.ts`).toBe(true);
  });

  it("the README's measured figures are quotes: its memory, disk and start-up numbers equal RESULTS.md's", () => {
    const readme = page('README.md');
    expect(quotedNames(readme)).toEqual(
      expect.arrayContaining(['idle-rss-anon', 'idle-rss', 'hook-rss-anon', 'install-disk', 'healthz-after-exec', 'install-time']),
    );
    const unquoted = readme.replace(/<!-- figure:[\w-]+ -->.*?<!-- \/figure -->/g, '');
    expect(unquoted.match(MEASURED) ?? []).toEqual([]);
    expect(readme).toContain(`<!-- figure:idle-rss-anon -->${figure(RESULTS, 'idle-rss-anon')}<!-- /figure --> private (RssAnon)`);
  });

  it('every figure is found in RESULTS.md and quoted somewhere', () => {
    const quoted = new Set(QUOTING_PAGES.flatMap((path) => quotedNames(page(path))));
    for (const name of Object.keys(FIGURES)) {
      expect(figure(RESULTS, name), name).toMatch(/\d/);
      expect(quoted.has(name), `${name} is quoted by no page`).toBe(true);
    }
  });

  it('a changed result changes the quote; a figure RESULTS.md no longer holds is named', () => {
    const quote = 'idles at <!-- figure:idle-rss-anon -->10.1 MiB<!-- /figure --> of';
    const footprint =
      '<!-- section:pod-footprint -->\n| mode | idle memory per pod |\n| --- | --- |\n| classic sidecar | 61.1 MiB (60.1 MiB–61.5 MiB) RSS, 12.3 MiB (12.0 MiB–12.5 MiB) RssAnon |\n<!-- /section:pod-footprint -->\n';
    expect(quoteFigures(quote, footprint)).toBe('idles at <!-- figure:idle-rss-anon -->12.3 MiB<!-- /figure --> of');
    expect(() => quoteFigures(quote, footprint.replace('classic sidecar', 'sidecar'))).toThrow(/idle-rss-anon/);
    expect(() => quoteFigures('<!-- figure:nothing -->1<!-- /figure -->', RESULTS)).toThrow(/no figure named nothing/);
  });
});
