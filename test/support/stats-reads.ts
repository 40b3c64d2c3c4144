// The drain's reads of Envoy's stats as the admin tap records them (src/envoy/stats-reader.ts): one
// full read of the Prometheus endpoint, then `usedonly` reads while the listeners stay the same.
import { statsReadPaths } from '../../src/envoy/stats-reader.js';
import type { StatsWanted } from '../../src/envoy/stat-names.js';

/** Whether an admin call is one of the drain's count reads, in either format. */
export function isStatsRead(call: { readonly method: string; readonly path: string }): boolean {
  return call.method === 'GET' && (call.path === '/stats' || call.path === '/stats/prometheus');
}

/** `count` reads of a drain over unchanging listeners, as `METHOD path?query`. */
export function expectedStatsReads(wanted: StatsWanted, count: number): string[] {
  const paths = statsReadPaths(wanted);
  return Array.from({ length: count }, (_, index) => `GET ${index === 0 ? paths.full : paths.usedOnly}`);
}
