// What one read's records say about Envoy's connections: per listener, per connection manager, and
// which managers serve which listener. Pure. Reads name only the stats that ever moved (`usedonly`),
// so a stat a read leaves out is 0, with two exceptions that only a full read can settle: no
// listener stat at all (a stats_matcher may have dropped them: the count is unknown, never 0) and a
// listener whose connections no pairing stat explains.
import { AdminError } from '../shared/errors.js';
import type { HttpCounts, ListenerCounts, Pairing } from './busy-connections.js';
import { LISTENER_STATS_HINT, listenerStatName, type StatRecord, TOTAL_CONNECTIONS_STAT } from './stat-names.js';
import { AMBIGUOUS } from './stats-answer.js';

/** One read's records, grouped. */
export interface StatsTable {
  readonly listeners: ReadonlyMap<string, ListenerCounts>;
  readonly http: ReadonlyMap<string, HttpCounts>;
  /** Listener → the connection managers a pairing stat names for it (AMBIGUOUS: one that could not be told). */
  readonly pairs: ReadonlyMap<string, ReadonlySet<string>>;
  readonly totalConnections: number | undefined;
  readonly uptimeS: number | undefined;
  /** The listener manager's update counters, summed: when it moves, the listeners changed. */
  readonly listenerUpdates: number;
}

export function tableOf(records: readonly StatRecord[]): StatsTable {
  const listeners = new Map<string, { active: number | undefined; accepted: number | undefined }>();
  const http = new Map<string, { connections: number; activeRequests: number; requests: number }>();
  const pairs = new Map<string, Set<string>>();
  let totalConnections: number | undefined;
  let uptimeS: number | undefined;
  let listenerUpdates = 0;
  const listener = (name: string): { active: number | undefined; accepted: number | undefined } => {
    let counts = listeners.get(name);
    if (counts === undefined) {
      counts = { active: undefined, accepted: undefined };
      listeners.set(name, counts);
    }
    return counts;
  };
  const manager = (prefix: string): { connections: number; activeRequests: number; requests: number } => {
    let counts = http.get(prefix);
    if (counts === undefined) {
      counts = { connections: 0, activeRequests: 0, requests: 0 };
      http.set(prefix, counts);
    }
    return counts;
  };
  const pair = (name: string): Set<string> => {
    let managers = pairs.get(name);
    if (managers === undefined) {
      managers = new Set();
      pairs.set(name, managers);
    }
    return managers;
  };
  const seen = new Set<string>();
  for (const { kind, listener: l, manager: m, value } of records) {
    const key = `${kind} ${l} ${m}`;
    // The listener manager's four update counters are one kind, summed: never duplicates of each other.
    if (seen.has(key) && m !== AMBIGUOUS && kind !== 'listener_update') throw malformed(`/stats names ${kind} of ${l || m || 'the server'} more than once`);
    seen.add(key);
    if (kind === 'cx_active') listener(l).active = value;
    else if (kind === 'cx_total') listener(l).accepted = value;
    else if (kind === 'http_cx_active') manager(m).connections = value;
    else if (kind === 'rq_active') manager(m).activeRequests = value;
    else if (kind === 'rq_total') manager(m).requests = value;
    else if (kind === 'rq_completed') pair(l).add(m);
    else if (kind === 'total_connections') totalConnections = value;
    else if (kind === 'uptime') uptimeS = value;
    else listenerUpdates += value;
  }
  return { listeners, http, pairs, totalConnections, uptimeS, listenerUpdates };
}

/**
 * A usedonly read completed with the last full one: a listener or pairing the full read named and
 * this one leaves out never moved since. The full read is only good while the listeners stand still.
 */
export function withFull(table: StatsTable, lastFullRead: StatsTable | undefined): StatsTable {
  if (lastFullRead === undefined || lastFullRead.listenerUpdates !== table.listenerUpdates) return table;
  const listeners = new Map(table.listeners);
  for (const name of lastFullRead.listeners.keys()) if (!listeners.has(name)) listeners.set(name, { active: 0, accepted: 0 });
  const pairs = new Map(table.pairs);
  for (const [name, managers] of lastFullRead.pairs) pairs.set(name, new Set([...managers, ...(table.pairs.get(name) ?? [])]));
  return { ...table, listeners, pairs };
}

/** Why no listener can be paired when a full read names connection managers but no pairing stat. */
const NO_LISTENER_HTTP_STATS =
  '/stats has HTTP connection managers but no listener.<name>.http.<prefix>.* stats that pair them with listeners (a stats_config.stats_matcher that drops them?)';

/**
 * Which managers serve which listener, from the pairing stats. A listener none names serves no
 * HTTP: its connections all count as busy. `holdsFullRead`: the table is (or holds) a full read's,
 * so a pairing stat it lacks is truly absent.
 */
export function pairingOf(table: StatsTable, holdsFullRead: boolean): Pairing {
  const byStatName = new Map<string, { connectionManagers: Set<string>; unreadable?: string }>();
  for (const name of new Set([...table.listeners.keys(), ...table.pairs.keys()])) {
    const managers = new Set(table.pairs.get(name));
    const unreadable = managers.delete(AMBIGUOUS) ? `a pairing stat of ${name} could name a connection manager of more than one listener` : undefined;
    byStatName.set(name, { connectionManagers: managers, ...(unreadable === undefined ? {} : { unreadable }) });
  }
  const unknown = holdsFullRead && table.http.size > 0 && table.pairs.size === 0 ? NO_LISTENER_HTTP_STATS : undefined;
  const key = JSON.stringify([
    unknown ?? '',
    ...[...byStatName].map(([name, serves]) => [name, [...serves.connectionManagers].sort(), serves.unreadable ?? '']).sort(),
  ]);
  return { topology: { byStatName }, key, ...(unknown === undefined ? {} : { unknown }) };
}

/** Whether a full read would tell more than `table`: no listener stat at all, or counted connections on a listener no pairing stat names. */
export function fullReadWanted(table: StatsTable, pairing: Pairing | undefined, ignored: ReadonlySet<string>): boolean {
  if (table.listeners.size === 0) return true;
  if (pairing === undefined) return false;
  for (const [name, { active }] of table.listeners) {
    if ((active ?? 0) > 0 && !ignored.has(name) && (pairing.topology.byStatName.get(name)?.connectionManagers.size ?? 0) === 0) return true;
  }
  return false;
}

/**
 * The listeners counted: all but `ignored`. A read names only stats that moved, so a listener's
 * missing gauge is 0, unless its counter moved (the gauge was dropped): unknown; and the same the
 * other way round. No listener stat at all (after a full read) is an error: they are filtered out.
 */
export function countedListeners(table: StatsTable, ignored: ReadonlySet<string>): Map<string, ListenerCounts> {
  if (table.listeners.size === 0) throw malformed(`/stats has no ${listenerStatName('<name>', 'cx_active')} gauges: ${LISTENER_STATS_HINT}`);
  const counted = new Map<string, ListenerCounts>();
  for (const [name, { active, accepted }] of table.listeners) {
    if (ignored.has(name)) continue;
    counted.set(name, { active: active ?? ((accepted ?? 0) > 0 ? undefined : 0), accepted: accepted ?? ((active ?? 0) > 0 ? undefined : 0) });
  }
  return counted;
}

/** A stat summed over the counted listeners; one a listener lacks makes the sum unknown, never smaller. */
export function sumOf(counted: ReadonlyMap<string, ListenerCounts>, key: 'active' | 'accepted'): number {
  let total = 0;
  for (const [listener, counts] of counted) {
    const value = counts[key];
    if (value === undefined)
      throw malformed(
        `/stats has no ${listenerStatName(listener, key === 'active' ? 'cx_active' : 'cx_total')} ${key === 'active' ? 'gauge' : 'counter'}: ${LISTENER_STATS_HINT}`,
      );
    total += value;
  }
  return total;
}

export function totalConnections(table: StatsTable): number {
  if (table.totalConnections === undefined)
    throw malformed(`/stats has no ${TOTAL_CONNECTIONS_STAT} gauge: if the bootstrap has a stats_config.stats_matcher, let it through`);
  return table.totalConnections;
}

function malformed(message: string): AdminError {
  return new AdminError('ESM_ADMIN_BAD_RESPONSE', message, false);
}
