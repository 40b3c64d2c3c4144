// Every link of a Markdown page, and whether it resolves: a relative link to a file or directory
// in the repository, its #fragment to a heading there (GitHub's anchor rules), an external link
// only well formed (no network).
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';

export interface Link {
  readonly page: string;
  readonly line: number;
  readonly target: string;
}

/** The page's lines with fenced code blocks blanked, line numbers kept. */
function outsideFences(text: string): string[] {
  let fenced = false;
  return text.split('\n').map((line) => {
    if (/^\s*(```|~~~)/.test(line)) {
      fenced = !fenced;
      return '';
    }
    return fenced ? '' : line;
  });
}

/** Inline links and images `[text](target "title")`, reference definitions `[x]: target`, autolinks `<https://…>`. */
export function linksOf(page: string, text: string): Link[] {
  const links: Link[] = [];
  outsideFences(text)
    .map((line) => line.replace(/(`+)[^`]*?\1/g, ''))
    .forEach((line, index) => {
      const found = [
        ...[...line.matchAll(/\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)/g)].map((match) => match[1]),
        ...[...line.matchAll(/^\s{0,3}\[[^\]]+\]:\s+<?(\S+?)>?(?:\s+"[^"]*")?\s*$/g)].map((match) => match[1]),
        ...[...line.matchAll(/<(https?:[^>\s]+)>/g)].map((match) => match[1]),
      ];
      for (const target of found) links.push({ page, line: index + 1, target: target ?? '' });
    });
  return links;
}

/** GitHub's anchor for a heading: Markdown dropped, lower case, punctuation removed, spaces as hyphens. */
export function slug(heading: string): string {
  return heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .replace(/[`*]/g, '')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** Every anchor a page offers: its headings' (the second of a name gets `-1`, …) and explicit `id`/`name` attributes. */
export function anchorsOf(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of outsideFences(text)) {
    const heading = /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1];
    if (heading !== undefined) {
      const base = slug(heading);
      const count = seen.get(base) ?? 0;
      seen.set(base, count + 1);
      anchors.add(count === 0 ? base : `${base}-${count}`);
    }
    for (const match of line.matchAll(/<a\s[^>]*(?:id|name)="([^"]+)"/g)) anchors.add(match[1] ?? '');
  }
  return anchors;
}

/** Why `link` does not resolve from inside `root`, or undefined when it does. */
export function brokenReason(root: string, link: Link): string | undefined {
  const { target } = link;
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return externalReason(target);
  if (target === '') return 'an empty link';
  const hash = target.indexOf('#');
  const path = hash < 0 ? target : target.slice(0, hash);
  const fragment = hash < 0 ? undefined : decodeURIComponent(target.slice(hash + 1));
  const file = path === '' ? resolve(root, link.page) : resolve(dirname(resolve(root, link.page)), decodeURIComponent(path));
  if (relative(root, file).startsWith('..')) return 'points outside the repository';
  if (!existsSync(file)) return `no such file: ${relative(root, file)}`;
  if (fragment === undefined) return undefined;
  if (statSync(file).isDirectory()) return 'a #fragment on a directory';
  const text = readFileSync(file, 'utf8');
  if (file.endsWith('.md')) return anchorsOf(text).has(fragment) ? undefined : `no heading #${fragment} in ${relative(root, file)}`;
  const lines = /^L(\d+)(?:-L(\d+))?$/.exec(fragment);
  if (lines === null) return `#${fragment}: only line anchors (#L12) exist in ${relative(root, file)}`;
  return Number(lines[2] ?? lines[1]) <= text.split('\n').length ? undefined : `#${fragment} is past the end of ${relative(root, file)}`;
}

/** External links are only checked for form: http(s) with a host, or mailto. */
function externalReason(target: string): string | undefined {
  if (/^mailto:[^@\s]+@[^@\s]+$/.test(target)) return undefined;
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    return 'not a URL';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return `unexpected scheme ${url.protocol}`;
  if (!/^[a-z0-9.-]+\.[a-z]{2,}$/i.test(url.hostname)) return `no host name: ${url.hostname}`;
  return undefined;
}
