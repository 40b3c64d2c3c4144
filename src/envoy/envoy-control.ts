// The things a drain needs from Envoy, expressed over its admin API.
import { AdminError } from '../shared/errors.js';
import type { AdminAddress } from './address.js';
import { createAdminClient, type EnvoyAdmin } from './admin-client.js';
import { countByHttpPrefix, type HttpCounts } from './http-stats.js';
import { pairingFromStats } from './listener-managers.js';
import { ignoredListeners, type IgnoreRules, type Pairing } from './pairing.js';
import {
  type ConnectionSource,
  type ListenerCounts,
  type Stat,
  countByListener,
  listenerNames,
  sumAccepted,
  sumActive,
  totalConnections,
  uptimeSeconds,
} from './stats.js';
import { createStatsReader, type StatsRead } from './stats-reader.js';

export const HEALTHCHECK_FAIL_PATH = '/healthcheck/fail';
/** `graceful`: connections are told to close (Connection: close, GOAWAY) while listeners keep accepting; `skip_exit`: listeners stay open at the end. */
export const SERVER_INFO_PATH = '/server_info';
export const GRACEFUL_DRAIN_PATH = '/drain_listeners?graceful&skip_exit';

export interface ConnectionReading {
  /** The count --connections names: server.total_connections (as of the last stats flush), or the live listener sum. */
  readonly connections: number;
  /** Per counted listener (never the admin listener, per-worker copies or ignored listeners). */
  readonly listeners?: ReadonlyMap<string, ListenerCounts>;
  /** Connections ever accepted on the counted listeners: its growth means new traffic still arrives. */
  readonly accepted?: number;
  /** With `total`: server.uptime, which moves only at a stats flush, as server.total_connections does. */
  readonly uptimeS?: number;
  /** Per HTTP connection manager stat prefix (never the admin API's), when asked for. */
  readonly http?: ReadonlyMap<string, HttpCounts>;
  /** With `http`: the listeners left out that /stats reports (a connection manager may serve them and a counted one). */
  readonly ignored?: ReadonlySet<string>;
  /** With `http`: which connection managers serve which listener, as Envoy's configuration says, or why that is unknown. */
  readonly pairing?: Pairing;
  /** A full read (the first, or after the listeners changed), which costs Envoy more than the ones between. */
  readonly fullRead?: boolean;
  /** What the read cost Envoy's main thread at most, when that can be told from its size. */
  readonly envoyCostMs?: number;
  /** Why the stats were read from the JSON /stats, which costs Envoy more on a large configuration, not its Prometheus endpoint. */
  readonly jsonBecause?: string;
}

/** `timeoutMs` shortens --admin-timeout for one call (never lengthens it). */
export interface EnvoyControl {
  failHealthCheck(signal?: AbortSignal, timeoutMs?: number): Promise<void>;
  startGracefulDrain(signal?: AbortSignal, timeoutMs?: number): Promise<void>;
  readConnections(signal?: AbortSignal, timeoutMs?: number): Promise<ConnectionReading>;
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
  const pairs = counting.countRequests === true || counting.ignore.connectionManagers.size > 0;
  // `total` always reads the live listener gauges too: server.total_connections is only recomputed
  // at a stats flush, so the drain takes the live sum as a floor, and server.uptime tells it when a flush happened.
  const reader = createStatsReader(admin, { server: counting.source === 'total', requests: pairs });
  // The listeners, their pairing and the ones left out change only with a full read (stats-reader.ts).
  let seen: Seen | undefined;
  /** The last read and what it read as: the reader gives the same read again when the stats are the same. */
  let last: { read: StatsRead; reading: ConnectionReading } | undefined;
  return {
    async failHealthCheck(signal, timeoutMs) {
      await admin.post(HEALTHCHECK_FAIL_PATH, signal, timeoutMs);
    },
    async startGracefulDrain(signal, timeoutMs) {
      await admin.post(GRACEFUL_DRAIN_PATH, signal, timeoutMs);
    },
    async readConnections(signal, timeoutMs) {
      const previous = last;
      last = undefined;
      const read = await reader.read(signal, timeoutMs);
      if (previous !== undefined && read === previous.read) {
        last = previous;
        return previous.reading;
      }
      const { stats, full, jsonBecause, envoyCostMs } = read;
      if (full || seen === undefined) {
        const listeners = listenerNames(stats);
        const pairing = pairs ? pairingFromStats(stats, listeners) : undefined;
        seen = { pairing, ignored: ignoredListeners(listeners, counting.ignore, pairing?.known === true ? pairing.topology : undefined) };
      }
      const reading = {
        ...readingOf(stats, seen, counting),
        ...(full && jsonBecause === undefined ? { fullRead: true } : {}),
        ...(envoyCostMs === undefined ? {} : { envoyCostMs }),
      };
      last = { read, reading: jsonBecause === undefined ? reading : { ...reading, jsonBecause } };
      return last.reading;
    },
    async readServerState(signal) {
      return parseServerState(await admin.get(SERVER_INFO_PATH, signal));
    },
  };
}

/** What the last full read said about the listeners: which connection managers serve them, and which are left out. */
interface Seen {
  readonly pairing: Pairing | undefined;
  readonly ignored: ReadonlySet<string>;
}

/** What one /stats answer says, read as `counting` asks, with the listeners as `seen`. Pure. */
function readingOf(stats: readonly Stat[], { pairing, ignored }: Seen, counting: ConnectionCounting): ConnectionReading {
  const total = counting.source === 'total' ? totalConnections(stats) : undefined;
  const extra = {
    ...(total === undefined ? {} : optional('uptimeS', uptimeSeconds(stats))),
    ...(counting.countRequests === true && pairing !== undefined ? { http: countByHttpPrefix(stats), ignored, pairing } : {}),
  };
  const required = counting.countAccepted === 'required';
  let listeners: Map<string, ListenerCounts>;
  try {
    listeners = countByListener(stats, ignored);
  } catch (error) {
    // A report, or `total` without a quiet period, goes on with the total alone (no live floor).
    if (total === undefined || required) throw error;
    return { connections: total, ...extra };
  }
  const connections = total ?? sumActive(listeners);
  if (counting.countAccepted === 'no') return { connections, listeners, ...extra };
  try {
    return { connections, listeners, accepted: sumAccepted(listeners), ...extra };
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

function optional<K extends string>(key: K, value: number | undefined): Partial<Record<K, number>> {
  return value === undefined ? {} : ({ [key]: value } as Record<K, number>);
}

/** What every command that talks to Envoy is configured with. */
export interface EnvoyConnection {
  readonly adminAddress: AdminAddress;
  readonly adminTimeoutMs: number;
  readonly connections: ConnectionSource;
  readonly ignoreListeners: ReadonlySet<string>;
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
    const ignore = { listeners: config.ignoreListeners, connectionManagers: config.ignoreConnectionManagers ?? new Set<string>() };
    return await use(createEnvoyControl(admin, { source: config.connections, ignore, countAccepted, countRequests }));
  } finally {
    await admin.close();
  }
}
