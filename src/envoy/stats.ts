// Reading connection counts out of Envoy's /stats JSON. Pure functions: the admin client fetches,
// these decide what the numbers mean. A count that cannot be read with certainty is an error,
// never a zero: a drain that reads "0" releases Envoy.
import { AdminError, UsageError } from '../shared/errors.js';
import { quote } from '../shared/parsers.js';
import { isAdminListener, isListenerUpdateStat, LISTENER_STATS_HINT, listenerStatName, matchHttpStat, matchListenerHttpStat, matchListenerStat, PER_THREAD_COPY, TOTAL_CONNECTIONS_STAT, UPTIME_STAT } from './stat-names.js';

export interface Stat {
  readonly name: string;
  readonly value: number;
}

/** Where a connection count comes from: see --connections. */
export type ConnectionSource = 'total' | 'listeners';
export const CONNECTION_SOURCES: readonly ConnectionSource[] = ['total', 'listeners'];

export function parseConnectionSource(text: string): ConnectionSource {
  const source = CONNECTION_SOURCES.find((candidate) => candidate === text);
  if (source === undefined) throw new UsageError(`${quote(text)} is not a connection source: expected ${CONNECTION_SOURCES.join(' or ')}`);
  return source;
}

/** The stats a count is made of: their values must be counts, and each may appear once. */
function isCountedStat(name: string): boolean {
  return name === TOTAL_CONNECTIONS_STAT || name === UPTIME_STAT || matchListenerStat(name) !== null || matchHttpStat(name) !== null || matchListenerHttpStat(name) !== null || isListenerUpdateStat(name);
}

/**
 * Parses `{"stats":[{"name":…,"value":…},…]}`. Entries without a name (the histograms block) are
 * skipped; the rest are checked as checkedStats says.
 */
export function parseStatsJson(body: string): Stat[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch (error) {
    throw malformed(`/stats returned a body that is not JSON: ${preview(body)}`, { cause: error });
  }
  const entries = isRecord(parsed) ? parsed['stats'] : undefined;
  if (!Array.isArray(entries)) throw malformed(`/stats returned JSON without a "stats" list: ${preview(body)}`);
  return checkedStats(
    entries.filter((entry): entry is { name: string; value: unknown } => isRecord(entry) && typeof entry['name'] === 'string'),
    '/stats',
  );
}

/**
 * The stats of one answer from `where`. Stats that are no part of a count are kept only when
 * their value is a count (text readouts have string values). A counted stat must be a whole
 * number >= 0 and appear once: Envoy's gauges are unsigned, so anything else is not Envoy's
 * answer, and reading it would be a guess.
 */
export function checkedStats(entries: Iterable<{ readonly name: string; readonly value: unknown }>, where: string, counted: (name: string) => boolean = isCountedStat): Stat[] {
  const stats: Stat[] = [];
  const seen = new Set<string>();
  for (const entry of entries) {
    const { name, value } = entry;
    if (!counted(name)) {
      if (isCount(value)) stats.push({ name, value });
      continue;
    }
    if (!hasCount(entry)) throw malformed(`${where}: ${name} is ${preview(typeof value === 'number' ? String(value) : (JSON.stringify(value) ?? 'missing'))}, not a whole number >= 0`);
    if (seen.has(name)) throw malformed(`${where}: ${name} appears more than once`);
    seen.add(name);
    // The entry itself, not a copy: a thousand listeners' read makes a few thousand of them.
    stats.push(entry);
  }
  return stats;
}

/** server.uptime, or undefined when Envoy did not report it. */
export function uptimeSeconds(stats: readonly Stat[]): number | undefined {
  return stats.find((s) => s.name === UPTIME_STAT)?.value;
}

export function totalConnections(stats: readonly Stat[]): number {
  const stat = stats.find((s) => s.name === TOTAL_CONNECTIONS_STAT);
  if (stat === undefined) {
    throw malformed(`/stats has no ${TOTAL_CONNECTIONS_STAT} gauge: if the bootstrap has a stats_config.stats_matcher, let it through`);
  }
  return stat.value;
}

export interface ListenerCounts {
  /** Live connections on this listener (downstream_cx_active); undefined when Envoy did not report it. */
  readonly active: number | undefined;
  /** Connections ever accepted on this listener (downstream_cx_total); undefined when Envoy did not report it. */
  readonly accepted: number | undefined;
}

/**
 * Groups `listener.<name>.downstream_cx_active|total` by listener name, leaving out the admin
 * listener, per-worker copies and every listener in `ignore` (exact names). Names may contain
 * dots (`0.0.0.0_10000`), so the name is everything between the prefix and the stat's suffix.
 * No data-plane listener stat at all is an error: every Envoy worth draining has a listener, so
 * their absence means the stats are filtered out, not that nothing is connected.
 */
export function countByListener(stats: readonly Stat[], ignore: ReadonlySet<string>): Map<string, ListenerCounts> {
  const byListener = new Map<string, { -readonly [K in keyof ListenerCounts]: ListenerCounts[K] }>();
  let dataPlaneStats = 0;
  for (const { name, value } of stats) {
    const match = matchListenerStat(name);
    if (match === null) continue;
    const listener = match[1] as string;
    if (isAdminListener(listener)) continue;
    if (PER_THREAD_COPY.test(listener)) continue;
    dataPlaneStats += 1;
    if (ignore.has(listener)) continue;
    let counts = byListener.get(listener);
    if (counts === undefined) {
      counts = { active: undefined, accepted: undefined };
      byListener.set(listener, counts);
    }
    if (match[2] === 'active') counts.active = value;
    else counts.accepted = value;
  }
  if (dataPlaneStats === 0) throw malformed(`/stats has no ${listenerStatName('<name>', 'active')} gauges: ${LISTENER_STATS_HINT}`);
  return byListener;
}

/** The data-plane listeners /stats reports (never the admin listener, nor per-thread copies). */
export function listenerNames(stats: readonly Stat[]): Set<string> {
  const names = new Set<string>();
  for (const { name } of stats) {
    const listener = matchListenerStat(name)?.[1];
    if (listener !== undefined && !isAdminListener(listener) && !PER_THREAD_COPY.test(listener)) names.add(listener);
  }
  return names;
}

/** Live connections on every counted listener; fails when one of them has no live gauge. */
export function sumActive(counts: ReadonlyMap<string, ListenerCounts>): number {
  return sumOf(counts, 'active');
}

/** Connections ever accepted on every counted listener; fails when one of them has no counter. */
export function sumAccepted(counts: ReadonlyMap<string, ListenerCounts>): number {
  return sumOf(counts, 'accepted');
}

/** One stat summed over the listeners: a listener without it makes the sum unknown, never smaller. */
function sumOf(counts: ReadonlyMap<string, ListenerCounts>, key: 'active' | 'accepted'): number {
  let total = 0;
  for (const [listener, listenerCounts] of counts) {
    const value = listenerCounts[key];
    const stat = key === 'active' ? `${listenerStatName(listener, 'active')} gauge` : `${listenerStatName(listener, 'total')} counter`;
    if (value === undefined) throw malformed(`/stats has no ${stat}: ${LISTENER_STATS_HINT}`);
    total += value;
  }
  return total;
}

function hasCount(entry: { readonly name: string; readonly value: unknown }): entry is Stat {
  return isCount(entry.value);
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

function malformed(message: string, options?: { cause?: unknown }): AdminError {
  return new AdminError('ESM_ADMIN_BAD_RESPONSE', message, false, options);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function preview(body: string): string {
  const flat = body.replace(/\s+/g, ' ').trim();
  return JSON.stringify(flat.length > 80 ? `${flat.slice(0, 80)}…` : flat);
}
