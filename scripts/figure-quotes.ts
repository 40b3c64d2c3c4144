// The benchmark figures the README and the docs quote, each read from bench/RESULTS.md, so that no
// number is copied by hand. A page quotes one as `<!-- figure:<name> -->10.1 MiB<!-- /figure -->`
// (the comments do not render); `quoteFigures` rewrites what sits between them, bench/run.ts does
// it after every run (node scripts/run-ts.mjs scripts/figures.ts by hand), and the docs test fails
// on any drift.
import { readFileSync, writeFileSync } from 'node:fs';

export const RESULTS_PAGE = 'bench/RESULTS.md';
/** The pages that quote figures. */
export const QUOTING_PAGES = ['README.md', 'bench/README.md', 'docs/migrating.md', 'docs/observe.md', 'charts/envoy-shutdown-manager/README.md'] as const;

/** Where a figure sits in RESULTS.md: a table cell (row by its first cell, column by its header's start) or a sentence. */
type Source =
  | { readonly section: string; readonly row: string; readonly column: string; readonly pick: RegExp }
  | { readonly section: string; readonly prose: RegExp };

const FIRST_DURATION = /^([\d.]+ m?s)\b/;
const MEDIAN_MIB = /^([\d.]+ MiB)/;

/** Every quoted figure by name. */
export const FIGURES: Readonly<Record<string, Source>> = {
  'full-run': { section: 'header', prose: /`, (\d+ s) for the scenarios/ },
  'idle-rss': { section: 'pod-footprint', row: 'classic sidecar', column: 'idle memory per pod', pick: /^([\d.]+ MiB) \([^)]*\) RSS/ },
  'idle-rss-anon': { section: 'pod-footprint', row: 'classic sidecar', column: 'idle memory per pod', pick: /([\d.]+ MiB) \([^)]*\) RssAnon/ },
  'hook-rss': { section: 'pod-footprint', prose: /the drain hook is one more process[^:]*: ([\d.]+ MiB) \(/ },
  'hook-rss-anon': { section: 'pod-footprint', prose: /the drain hook is one more process[^:]*: [^,]+ RSS, ([\d.]+ MiB) \(/ },
  'healthz-after-exec': { section: 'pod-footprint', row: 'classic sidecar', column: 'start-up work per pod', pick: /([\d.]+ m?s) \(/ },
  'install-disk': { section: 'pod-footprint', row: 'sidecar-less', column: 'disk per pod', pick: MEDIAN_MIB },
  'install-time': { section: 'pod-footprint', row: 'sidecar-less', column: 'start-up work per pod', pick: /install ([\d.]+ m?s)/ },
  'idle-rss-anon-vs-node': { section: 'idle-memory', row: 'single executable', column: 'RssAnon vs bare Node', pick: /^([\d.]+×)/ },
  'release-listeners': { section: 'release-latency', row: 'this tool, `--connections listeners`', column: '(b)', pick: FIRST_DURATION },
  'release-total': { section: 'release-latency', row: 'this tool, `--connections total` (default)', column: '(b)', pick: FIRST_DURATION },
  'peers-release-ours': { section: 'peers', row: 'release latency: last connection closed → preStop GET answered', column: 'ours', pick: FIRST_DURATION },
  'peers-release-eg': {
    section: 'peers',
    row: 'release latency: last connection closed → preStop GET answered',
    column: 'Envoy Gateway',
    pick: FIRST_DURATION,
  },
  'peers-release-contour': { section: 'peers', row: 'release latency: last connection closed → preStop GET answered', column: 'Contour', pick: FIRST_DURATION },
  'waiters-last-answer': {
    section: 'many-waiters',
    row: 'file appears → **last answer received** (clients)',
    column: 'manager, defaults, **10,000',
    pick: FIRST_DURATION,
  },
  'waiters-last-answer-bare': {
    section: 'many-waiters',
    row: 'file appears → **last answer received** (clients)',
    column: 'baseline: bare Node',
    pick: FIRST_DURATION,
  },
  'waiters-last-answer-ratio': {
    section: 'many-waiters',
    row: 'last answer received, vs the bare Node baseline (same run)',
    column: 'manager, defaults, **10,000',
    pick: /^([\d.]+×)/,
  },
  'waiter-bytes': { section: 'many-waiters', row: 'extra RssAnon per waiter', column: 'manager, defaults, **10,000', pick: /^([\d,]+ B)/ },
  'fleet-rollout-eg-ratio': { section: 'fleet-peers', row: "Envoy Gateway's pod, ours (drop-in)", column: 'rollout ours/peer', pick: /^([\d.]+)/ },
  'fleet-rollout-contour-ratio': { section: 'fleet-peers', row: "Contour's pod, ours (drop-in)", column: 'rollout ours/peer', pick: /^([\d.]+)/ },
  'fleet-held-eg': { section: 'fleet-peers', row: "Envoy Gateway's pod, ours (drop-in)", column: 'held for nothing per pod', pick: FIRST_DURATION },
  'fleet-held-contour': { section: 'fleet-peers', row: "Contour's pod, ours (drop-in)", column: 'held for nothing per pod', pick: FIRST_DURATION },
  'fleet-rollout-eg-ours': { section: 'fleet-peers', row: "Envoy Gateway's pod, ours (drop-in)", column: 'rollout: first deletion', pick: FIRST_DURATION },
  'fleet-rollout-eg-peer': { section: 'fleet-peers', row: "Envoy Gateway's pod, its own manager", column: 'rollout: first deletion', pick: FIRST_DURATION },
  'fleet-rollout-contour-ours': { section: 'fleet-peers', row: "Contour's pod, ours (drop-in)", column: 'rollout: first deletion', pick: FIRST_DURATION },
  'fleet-rollout-contour-peer': { section: 'fleet-peers', row: "Contour's pod, its own manager", column: 'rollout: first deletion', pick: FIRST_DURATION },
  'final-scrape-stay': {
    section: 'fleet-final-scrape',
    row: 'pod network, final scrape (scraped every 15 s)',
    column: "Envoy's exit → the pod's",
    pick: FIRST_DURATION,
  },
  'final-scrape-stay-max': {
    section: 'fleet-final-scrape',
    row: 'pod network, final scrape (scraped every 15 s)',
    column: "Envoy's exit → the pod's",
    pick: /\(max ([\d.]+ m?s)\)/,
  },
  'final-scrape-hostnetwork-ratio': {
    section: 'fleet-final-scrape',
    row: 'hostNetwork, final scrape (scraped every 15 s)',
    column: 'old pods gone vs. without',
    pick: /^([\d.]+)/,
  },
  'final-scrape-pod-network-ready-ratio': {
    section: 'fleet-final-scrape',
    row: 'pod network, final scrape (scraped every 15 s)',
    column: 'new pods ready vs. without',
    pick: /^([\d.]+)/,
  },
  'waiter-bytes-bare': { section: 'many-waiters', row: 'extra RssAnon per waiter', column: 'baseline: bare Node', pick: /^([\d,]+ B)/ },
  'waiters-1000-rss-anon': { section: 'many-waiters', row: 'with every waiter in: RssAnon', column: 'manager, defaults, **1,000', pick: MEDIAN_MIB },
  'startup-hook': { section: 'startup', row: '**ours**, `shutdown` as a hook runs it (code cache)', column: 'median', pick: FIRST_DURATION },
  'startup-hook-vs-node': {
    section: 'startup',
    row: '**ours**, `shutdown` as a hook runs it (code cache)',
    column: 'ratio to `node -e 0`',
    pick: /^([\d.]+×)/,
  },
  'startup-http-floor-vs-node': {
    section: 'startup',
    row: 'single executable that loads `node:http` and sends `POST /healthcheck/fail`',
    column: 'ratio to `node -e 0`',
    pick: /^([\d.]+×)/,
  },
  'startup-manager-vs-bare': {
    section: 'startup',
    row: '**ours**, `shutdown-manager --port … --ready-file …`',
    column: 'ratio to the bare server',
    pick: /^([\d.]+×)/,
  },
  'undici-start': { section: 'dependencies', prose: /undici would add ([\d.]+ m?s)/ },
  'undici-memory': { section: 'dependencies', prose: /undici would add [\d.]+ m?s and ([\d.]+ MiB)/ },
  'pino-start': { section: 'dependencies', prose: /; pino ([\d.]+ m?s) and/ },
  'pino-memory': { section: 'dependencies', prose: /; pino [\d.]+ m?s and ([\d.]+ MiB)/ },
};

/** The text of one `<!-- section:name -->` of RESULTS.md. */
export function resultsSection(results: string, name: string): string | undefined {
  const start = results.indexOf(`<!-- section:${name} -->`);
  const end = results.indexOf(`<!-- /section:${name} -->`);
  return start < 0 || end < start ? undefined : results.slice(start, end);
}

const cells = (line: string): string[] =>
  line
    .trim()
    .replace(/^\|/, '')
    .replace(/\|$/, '')
    .split(' | ')
    .map((cell) => cell.trim());

/** The cell of the first table row whose first cell is `row`, under the first header that starts with `column`. */
export function tableCell(text: string, row: string, column: string): string | undefined {
  let header: string[] | undefined;
  for (const line of text.split('\n')) {
    if (!line.startsWith('|')) {
      header = undefined;
      continue;
    }
    const values = cells(line);
    if (header === undefined) {
      header = values;
      continue;
    }
    const index = header.findIndex((name) => name.startsWith(column));
    if (index > 0 && values[0] === row) return values[index];
  }
  return undefined;
}

/** The figure's current value in `results`; throws naming it when RESULTS.md no longer has it. */
export function figure(results: string, name: string): string {
  const source = FIGURES[name];
  if (source === undefined) throw new Error(`no figure named ${name}: add it to FIGURES in scripts/figure-quotes.ts`);
  const section = resultsSection(results, source.section);
  const text = section === undefined ? undefined : 'prose' in source ? section : tableCell(section, source.row, source.column);
  const value = text === undefined ? undefined : ('prose' in source ? source.prose : source.pick).exec(text)?.[1];
  if (value === undefined)
    throw new Error(`${RESULTS_PAGE} no longer holds the figure ${name} (section ${source.section}): update FIGURES in scripts/figure-quotes.ts`);
  return value;
}

const QUOTE = /<!-- figure:([\w-]+) -->(.*?)<!-- \/figure -->/g;

/** The names `page` quotes. */
export function quotedNames(page: string): string[] {
  return [...page.matchAll(QUOTE)].map((match) => match[1] ?? '');
}

/** `page` with every quoted figure replaced by its value in `results`. */
export function quoteFigures(page: string, results: string): string {
  return page.replace(QUOTE, (_quote, name: string) => `<!-- figure:${name} -->${figure(results, name)}<!-- /figure -->`);
}

/** Rewrites every quoting page from RESULTS.md; returns the pages that changed. */
export function rewriteQuotes(): string[] {
  const results = readFileSync(RESULTS_PAGE, 'utf8');
  return QUOTING_PAGES.filter((path) => {
    const before = readFileSync(path, 'utf8');
    const after = quoteFigures(before, results);
    if (after !== before) writeFileSync(path, after);
    return after !== before;
  });
}
