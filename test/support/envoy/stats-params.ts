// Parses the query of /stats like Envoy's admin: filter (an RE2 regex), type, usedonly, format.
// JS RegExp stands in for RE2, so what RE2 refuses (lookaround, backreferences) is refused first.
import type { QueryParams } from './admin-request.js';

export type StatsType = 'All' | 'Counters' | 'Gauges' | 'Histograms' | 'TextReadouts';
export type StatsFormat = 'text' | 'json' | 'prometheus';

export interface StatsParams {
  filter: RegExp | undefined;
  type: StatsType;
  usedOnly: boolean;
  format: StatsFormat;
  /** Prometheus only renders text readouts when asked to. */
  textReadouts: boolean;
}

export type StatsParamsResult = { ok: true; params: StatsParams } | { ok: false; body: string };

const TYPES: readonly StatsType[] = ['All', 'Counters', 'Gauges', 'Histograms', 'TextReadouts'];

export function parseStatsParams(query: QueryParams, forcedFormat?: StatsFormat): StatsParamsResult {
  const typeParam = query.get('type');
  const type = typeParam === undefined ? 'All' : TYPES.find((candidate) => candidate === typeParam);
  if (type === undefined) return { ok: false, body: 'invalid &type= param' };

  const formatParam = forcedFormat ?? query.get('format') ?? 'text';
  if (formatParam !== 'text' && formatParam !== 'json' && formatParam !== 'prometheus') {
    // Envoy also has html and active-html; a fixture has no use for them, but names them as Envoy does.
    return { ok: false, body: `usage: /stats?format=(html|active-html|json|prometheus|text)\n\n` };
  }

  let filter: RegExp | undefined;
  const filterParam = query.get('filter');
  if (filterParam !== undefined && filterParam !== '') {
    filter = compileRe2(filterParam);
    if (filter === undefined) return { ok: false, body: 'Invalid re2 regex' };
  }

  return {
    ok: true,
    params: {
      filter,
      type,
      usedOnly: query.has('usedonly'),
      format: formatParam,
      textReadouts: query.has('text_readouts'),
    },
  };
}

/**
 * Compiles an RE2 pattern as a JS RegExp, or returns undefined where RE2 would fail to compile it.
 * RE2 has no lookaround and no backreferences; JS has no (?P<name>) groups nor inline flags,
 * so those two RE2 spellings are translated rather than refused.
 */
export function compileRe2(pattern: string): RegExp | undefined {
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i];
    if (ch === '\\') {
      const next = pattern[i + 1] ?? '';
      if (/[1-9k]/.test(next)) return undefined; // \1..\9 and \k<name> are backreferences
      i++;
    } else if (inClass) {
      if (ch === ']') inClass = false;
    } else if (ch === '[') {
      inClass = true;
    } else if (ch === '(' && /^\(\?(=|!|<=|<!)/.test(pattern.slice(i))) {
      return undefined;
    }
  }

  let source = pattern.replaceAll('(?P<', '(?<');
  let flags = '';
  const leadingFlags = /^\(\?([ims]+)\)/.exec(source);
  if (leadingFlags?.[1] !== undefined) {
    flags = [...new Set(leadingFlags[1])].join('');
    source = source.slice(leadingFlags[0].length);
  }
  try {
    return new RegExp(source, flags);
  } catch {
    return undefined;
  }
}
