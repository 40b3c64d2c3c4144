// Reading connection counts out of Envoy's /stats JSON. Pure functions: the admin client fetches,
// these decide what the numbers mean.
import { AdminError } from '../errors.js';

export interface Stat {
  readonly name: string;
  readonly value: number;
}

/** The gauge Envoy Gateway's design reads. Only recomputed at each stats flush (5 s by default). */
export const TOTAL_CONNECTIONS_STAT = 'server.total_connections';
export const TOTAL_CONNECTIONS_FILTER = '^server\\.total_connections$';
/** Live per-listener gauges, and the counters of connections each listener ever accepted. */
export const LISTENER_STATS_FILTER = '^listener\\..*\\.downstream_cx_(active|total)$';
/** Both of the above in one request, for `total` with a quiet period. */
export const TOTAL_AND_LISTENER_STATS_FILTER = '^(server\\.total_connections|listener\\..*\\.downstream_cx_(active|total))$';

/** Where a connection count comes from: see --connections. */
export type ConnectionSource = 'total' | 'listeners';
export const CONNECTION_SOURCES: readonly ConnectionSource[] = ['total', 'listeners'];

/** The admin listener's own stats scope: our polling connection lives here, never count it. */
const ADMIN_LISTENER = 'admin';
/** Per-thread copies of a listener's stats (`listener.<name>.worker_3.*`), already in the listener's sum. */
const PER_THREAD_COPY = /\.(worker_\d+|main_thread)$/;

/** Parses `{"stats":[{"name":…,"value":…},…]}`. Entries without a numeric value (histograms) are skipped. */
export function parseStatsJson(body: string): Stat[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch (error) {
    throw new AdminError('ESM_ADMIN_BAD_RESPONSE', `/stats returned a body that is not JSON: ${preview(body)}`, false, { cause: error });
  }
  const entries = isRecord(parsed) ? parsed['stats'] : undefined;
  if (!Array.isArray(entries)) {
    throw new AdminError('ESM_ADMIN_BAD_RESPONSE', `/stats returned JSON without a "stats" list: ${preview(body)}`, false);
  }
  const stats: Stat[] = [];
  for (const entry of entries) {
    if (isRecord(entry) && typeof entry['name'] === 'string' && typeof entry['value'] === 'number') {
      stats.push({ name: entry['name'], value: entry['value'] });
    }
  }
  return stats;
}

export function totalConnections(stats: readonly Stat[]): number {
  const stat = stats.find((s) => s.name === TOTAL_CONNECTIONS_STAT);
  if (stat === undefined) {
    throw new AdminError('ESM_ADMIN_BAD_RESPONSE', `/stats has no ${TOTAL_CONNECTIONS_STAT} gauge`, false);
  }
  return stat.value;
}

export interface ListenerCounts {
  /** Live connections on this listener (downstream_cx_active). */
  readonly active: number;
  /** Connections ever accepted on this listener (downstream_cx_total). */
  readonly accepted: number;
}

/**
 * Groups `listener.<name>.downstream_cx_active|total` by listener name, leaving out the admin
 * listener, per-worker copies and every listener in `ignore` (exact names). Names may contain
 * dots (`0.0.0.0_10000`), so the name is everything between the prefix and the stat's suffix.
 */
export function countByListener(stats: readonly Stat[], ignore: ReadonlySet<string>): Map<string, ListenerCounts> {
  const byListener = new Map<string, ListenerCounts>();
  for (const { name, value } of stats) {
    const match = /^listener\.(.+)\.downstream_cx_(active|total)$/.exec(name);
    if (match === null) continue;
    const listener = match[1] as string;
    if (listener === ADMIN_LISTENER || listener.startsWith(`${ADMIN_LISTENER}.`)) continue;
    if (PER_THREAD_COPY.test(listener) || ignore.has(listener)) continue;
    const counts = byListener.get(listener) ?? { active: 0, accepted: 0 };
    byListener.set(listener, match[2] === 'active' ? { ...counts, active: value } : { ...counts, accepted: value });
  }
  return byListener;
}

export function sumActive(counts: ReadonlyMap<string, ListenerCounts>): number {
  let total = 0;
  for (const { active } of counts.values()) total += active;
  return total;
}

export function sumAccepted(counts: ReadonlyMap<string, ListenerCounts>): number {
  let total = 0;
  for (const { accepted } of counts.values()) total += accepted;
  return total;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function preview(body: string): string {
  const flat = body.replace(/\s+/g, ' ').trim();
  return JSON.stringify(flat.length > 80 ? `${flat.slice(0, 80)}…` : flat);
}
