// The things a drain needs from Envoy, expressed over its admin API.
import { AdminError, UsageError } from '../shared/errors.js';
import { quote } from '../shared/parsers.js';
import type { AdminAddress } from './address.js';
import { createAdminClient, type EnvoyAdmin } from './admin-client.js';
import { type HttpCounts, type IgnoreRules, ignoredListeners, type ListenerCounts, type Pairing } from './busy-connections.js';
import { countedListeners, fullReadWanted, pairingOf, type StatsTable, sumOf, tableOf, totalConnections, withFull } from './connections.js';
import { type ReadKind, StatsReader } from './stats-reader.js';

export const HEALTHCHECK_FAIL_PATH = '/healthcheck/fail';
const SERVER_INFO_PATH = '/server_info';
/** `graceful`: connections are told to close (Connection: close, GOAWAY) while listeners keep accepting; `skip_exit`: listeners stay open at the end. */
export const GRACEFUL_DRAIN_PATH = '/drain_listeners?graceful&skip_exit';

/** Where a connection count comes from: see --connections. */
export type ConnectionSource = 'total' | 'listeners';
const CONNECTION_SOURCES: readonly ConnectionSource[] = ['total', 'listeners'];

export function parseConnectionSource(text: string): ConnectionSource {
  const source = CONNECTION_SOURCES.find((candidate) => candidate === text);
  if (source === undefined) throw new UsageError(`${quote(text)} is not a connection source: expected ${CONNECTION_SOURCES.join(' or ')}`);
  return source;
}

export interface ConnectionReading {
  /** The count --connections names: server.total_connections (as of the last stats flush), or the live listener sum. */
  readonly connections: number;
  /** Per counted listener that ever had a connection (never the admin listener, per-worker copies or ignored listeners). */
  readonly listeners?: ReadonlyMap<string, ListenerCounts>;
  /** Connections ever accepted on the counted listeners: its growth means new traffic still arrives. */
  readonly accepted?: number;
  /** With `total`: server.uptime, which moves only at a stats flush, as server.total_connections does. */
  readonly uptimeS?: number;
  /** Per HTTP connection manager stat prefix (never the admin API's), when asked for. */
  readonly http?: ReadonlyMap<string, HttpCounts>;
  /** With `http`: the listeners left out (a connection manager may serve them and a counted one). */
  readonly ignored?: ReadonlySet<string>;
  /** With `http`: which connection managers serve which listener, as Envoy's stats say. */
  readonly pairing?: Pairing;
  /** The GET that read it and what that costs Envoy (stats-reader.ts). */
  readonly read: { readonly path: string; readonly priceMs: number; readonly textBecause?: string };
}

/** `timeoutMs` shortens --admin-timeout for one call (never lengthens it). */
export interface EnvoyControl {
  failHealthCheck(signal?: AbortSignal, timeoutMs?: number): Promise<void>;
  startGracefulDrain(signal?: AbortSignal, timeoutMs?: number): Promise<void>;
  readConnections(signal?: AbortSignal, timeoutMs?: number): Promise<ConnectionReading>;
  /** What the next readConnections is expected to cost Envoy, in ms (0 before the first). */
  nextReadPriceMs(): number;
  /** /server_info's `state`: LIVE, DRAINING (health check failed), PRE_INITIALIZING, INITIALIZING. */
  readServerState(signal?: AbortSignal): Promise<string>;
}

export interface ConnectionCounting {
  readonly source: ConnectionSource;
  /** Listeners never counted, matched exactly. */
  readonly ignore: IgnoreRules;
  /** Also read the listeners' accepted-connection counters: `required` for --quiet-period, `if-available` for a report. */
  readonly countAccepted: AcceptedCounting;
  /** Also read the HTTP connection managers' request stats (for --ignore-idle-connections). */
  readonly countRequests?: boolean;
}

/**
 * A quiet period judged without the counters would read "no new connections": there they are
 * `required`, and a reading without them fails. A report takes them `if-available`.
 */
export type AcceptedCounting = 'no' | 'if-available' | 'required';

export function createEnvoyControl(admin: EnvoyAdmin, counting: ConnectionCounting): EnvoyControl {
  // The pairing tells idle connections, and which listeners the drop-ins' connection managers alone serve.
  const pairs = counting.countRequests === true || counting.ignore.ignoreConnectionManagers.size > 0;
  // `total` always reads the live listener gauges too: server.total_connections is only recomputed
  // at a stats flush, so the drain takes the live sum as a floor, and server.uptime tells it when a flush happened.
  const reader = new StatsReader(admin, { server: counting.source === 'total', requests: pairs });
  /** The last full read's table (good while the listener manager's update counters stand still). */
  let lastFullRead: StatsTable | undefined;
  // A report for a person (`status`, `--dry-run`) names every listener: its first read is a full one.
  let nextKind: ReadKind = counting.countAccepted === 'if-available' ? 'full' : 'used';
  return {
    async failHealthCheck(signal, timeoutMs) {
      await admin.post(HEALTHCHECK_FAIL_PATH, signal, timeoutMs);
    },
    async startGracefulDrain(signal, timeoutMs) {
      await admin.post(GRACEFUL_DRAIN_PATH, signal, timeoutMs);
    },
    async readConnections(signal, timeoutMs) {
      let priceMs = 0;
      for (;;) {
        const read = await reader.read(nextKind, signal, timeoutMs);
        priceMs += read.priceMs;
        const used = tableOf(read.records);
        if (read.kind === 'full') lastFullRead = used;
        const table = withFull(used, lastFullRead);
        const holdsFullRead = lastFullRead !== undefined && lastFullRead.listenerUpdates === used.listenerUpdates;
        const pairing = pairs ? pairingOf(table, holdsFullRead) : undefined;
        const ignored = ignoredListeners(table.listeners.keys(), counting.ignore, pairing?.topology);
        nextKind = !holdsFullRead && fullReadWanted(table, pairing, ignored) ? 'full' : 'used';
        // A read without a single listener stat cannot tell "none moved" from "dropped by a stats_matcher": a full read can.
        if (nextKind === 'full' && table.listeners.size === 0) continue;
        const cost = { path: read.path, priceMs, ...(read.textBecause === undefined ? {} : { textBecause: read.textBecause }) };
        return { ...readingOf(table, ignored, counting), ...(pairing === undefined ? {} : { http: table.http, ignored, pairing }), read: cost };
      }
    },
    nextReadPriceMs: () => reader.priceOf(nextKind),
    async readServerState(signal) {
      return parseServerState(await admin.get(SERVER_INFO_PATH, signal));
    },
  };
}

/** The counts of one read, as `counting` asks. Pure. */
function readingOf(table: StatsTable, ignored: ReadonlySet<string>, counting: ConnectionCounting): Omit<ConnectionReading, 'read'> {
  const total = counting.source === 'total' ? totalConnections(table) : undefined;
  const extra = total === undefined || table.uptimeS === undefined ? {} : { uptimeS: table.uptimeS };
  const required = counting.countAccepted === 'required';
  let listeners: Map<string, ListenerCounts>;
  try {
    listeners = countedListeners(table, ignored);
  } catch (error) {
    // A report, or `total` without a quiet period, goes on with the total alone (no live floor).
    if (total === undefined || required) throw error;
    return { connections: total, ...extra };
  }
  const connections = total ?? sumOf(listeners, 'active');
  if (counting.countAccepted === 'no') return { connections, listeners, ...extra };
  try {
    return { connections, listeners, accepted: sumOf(listeners, 'accepted'), ...extra };
  } catch (error) {
    if (required) throw error;
    return { connections, listeners, ...extra };
  }
}

/** /server_info's `state`. */
function parseServerState(body: string): string {
  let state: unknown;
  try {
    state = (JSON.parse(body) as { state?: unknown }).state;
  } catch (error) {
    throw new AdminError('ESM_ADMIN_BAD_RESPONSE', `${SERVER_INFO_PATH} returned a body that is not JSON`, false, { cause: error });
  }
  if (typeof state !== 'string') throw new AdminError('ESM_ADMIN_BAD_RESPONSE', `${SERVER_INFO_PATH} has no state`, false);
  return state;
}

/** What every command that talks to Envoy is configured with. */
export interface EnvoyConnection {
  readonly adminAddress: AdminAddress;
  readonly adminTimeoutMs: number;
  readonly connections: ConnectionSource;
  readonly ignoreListener: ReadonlySet<string>;
  /** Listeners served only by these connection managers are not counted either (the drop-ins' own stats and health listeners). */
  readonly ignoreConnectionManagers?: ReadonlySet<string>;
  /** Read the request stats too, which tell idle connections (`shutdown --ignore-idle-connections`, `status`). */
  readonly countRequests?: boolean;
}

/** Opens the admin connection, hands Envoy to `use`, and closes the connection however `use` ends. */
export async function withEnvoy<T>(config: EnvoyConnection, countAccepted: AcceptedCounting, use: (envoy: EnvoyControl) => Promise<T>): Promise<T> {
  const admin = await createAdminClient({ address: config.adminAddress, timeoutMs: config.adminTimeoutMs });
  try {
    const countRequests = config.countRequests === true;
    const ignore = { ignoreListener: config.ignoreListener, ignoreConnectionManagers: config.ignoreConnectionManagers ?? new Set<string>() };
    return await use(createEnvoyControl(admin, { source: config.connections, ignore, countAccepted, countRequests }));
  } finally {
    await admin.close();
  }
}
