// The drain's reads of Envoy's stats as the admin tap records them (src/envoy/stats-reader.ts):
// usedonly reads, and a full one only right after a usedonly read that could not tell (no listener
// stat had moved, or connections on a listener no pairing stat names); each read in either format,
// since which one is cheaper on this Envoy is measured as the drain goes.

import type { StatsWanted } from '../../src/envoy/stat-names.js';
import { type ReadKind, statsPath } from '../../src/envoy/stats-reader.js';

/** Whether an admin call is one of the drain's count reads, in either format. */
export function isStatsRead(call: { readonly method: string; readonly path: string }): boolean {
  return call.method === 'GET' && (call.path === '/stats' || call.path === '/stats/prometheus');
}

/**
 * What a drain reading `wanted` should have sent, given the reads it sent (`METHOD path?query`):
 * each one that fits the rules above as it is, any other as the usedonly Prometheus read, so that
 * a comparison of the two points at the read that broke them.
 */
export function expectedStatsReads(wanted: StatsWanted, reads: readonly string[]): string[] {
  const gets = (kind: ReadKind): Set<string> => new Set((['prometheus', 'text'] as const).map((format) => `GET ${statsPath(format, kind, wanted)}`));
  const used = gets('used');
  const full = gets('full');
  return reads.map((read, index) =>
    used.has(read) || (full.has(read) && used.has(reads[index - 1] ?? '')) ? read : `GET ${statsPath('prometheus', 'used', wanted)}`,
  );
}
