// The documentation's links: every relative link in README.md, docs/ and bench/README.md names a
// file of the repository and, with a #fragment, a heading in it (as GitHub makes anchors); external
// links are only checked for form.
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { anchorsOf, brokenReason, linksOf, slug } from '../support/markdown-links.js';

const PAGES = [
  'README.md',
  'bench/README.md',
  'charts/envoy-shutdown-manager/README.md',
  ...readdirSync('docs')
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];

function broken(root: string, page: string): string[] {
  return linksOf(page, readFileSync(join(root, page), 'utf8')).flatMap((link) => {
    const reason = brokenReason(root, link);
    return reason === undefined ? [] : [`${link.page}:${link.line}: ${link.target}: ${reason}`];
  });
}

describe('documentation links', () => {
  it.each(PAGES)('%s: every link resolves', (page) => {
    expect(broken(process.cwd(), page)).toEqual([]);
  });

  it('finds the links of the front door', () => {
    const targets = linksOf('README.md', readFileSync('README.md', 'utf8')).map((link) => link.target);
    expect(targets).toContain('docs/reference.md');
    expect(targets).toContain('#install-with-helm');
  });

  it('makes anchors as GitHub does: code, punctuation and links dropped, repeats numbered', () => {
    expect(slug('Drop-in for Envoy Gateway / Contour')).toBe('drop-in-for-envoy-gateway--contour');
    expect(slug('`shutdown-manager`')).toBe('shutdown-manager');
    expect(slug('When to use `--quiet-period` instead of a long `--min-drain-duration`')).toBe(
      'when-to-use---quiet-period-instead-of-a-long---min-drain-duration',
    );
    expect(slug('Release: one image for amd64 and arm64 nodes')).toBe('release-one-image-for-amd64-and-arm64-nodes');
    expect(slug('[The chart](x.md) and snake_case')).toBe('the-chart-and-snake_case');
    expect([...anchorsOf('# A\n## A\n```\n# not a heading\n```\n### A\n<a id="here"></a>')]).toEqual(['a', 'a-1', 'a-2', 'here']);
  });

  describe('on a page with broken links', () => {
    const root = mkdtempSync(join(tmpdir(), 'esm-links-'));
    afterAll(() => rmSync(root, { recursive: true, force: true }));

    it('names each broken link with its line and why, and passes the good ones', () => {
      writeFileSync(join(root, 'other.md'), '# Other page\n');
      writeFileSync(join(root, 'code.ts'), 'one\ntwo\nthree\n');
      writeFileSync(
        join(root, 'page.md'),
        [
          '# Page',
          '[good](other.md#other-page) [self](#page) [web](https://example.org/a?b#c) `[code](nowhere.md)`',
          '[missing](nowhere.md) [no heading](other.md#elsewhere) [no self](#nothing)',
          '[line](code.ts#L3) [past](code.ts#L9) [name](code.ts#main) ![bad url](https://exa_mple) [outside](../../etc/passwd)',
          '```',
          '[in a fence](gone.md)',
          '```',
        ].join('\n'),
      );
      expect(broken(root, 'page.md')).toEqual([
        'page.md:3: nowhere.md: no such file: nowhere.md',
        'page.md:3: other.md#elsewhere: no heading #elsewhere in other.md',
        'page.md:3: #nothing: no heading #nothing in page.md',
        'page.md:4: code.ts#L9: #L9 is past the end of code.ts',
        'page.md:4: code.ts#main: #main: only line anchors (#L12) exist in code.ts',
        'page.md:4: https://exa_mple: no host name: exa_mple',
        'page.md:4: ../../etc/passwd: points outside the repository',
      ]);
    });
  });
});
