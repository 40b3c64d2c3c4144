// The things a drain needs from Envoy, expressed over its admin API.
import { AdminError } from '../errors.js';
import type { AdminAddress } from './address.js';
import { createAdminClient, type EnvoyAdmin } from './admin-client.js';
import {
  type ConnectionSource,
  type ListenerCounts,
  HTTP_STATS_FILTER,
  LISTENER_STATS_FILTER,
  TOTAL_AND_LISTENER_STATS_FILTER,
  TOTAL_CONNECTIONS_FILTER,
  countByListener,
  parseStatsJson,
  sumAccepted,
  sumActive,
  sumHttpActive,
  totalConnections,
} from './stats.js';

export const HEALTHCHECK_FAIL_PATH = '/healthcheck/fail';
/** `graceful`: connections are told to close (Connection: close, GOAWAY) while listeners keep accepting; `skip_exit`: listeners stay open at the end. */
export const SERVER_INFO_PATH = '/server_info';
export const GRACEFUL_DRAIN_PATH = '/drain_listeners?graceful&skip_exit';

export interface ConnectionReading {
  /** The number the drain decision uses. */
  readonly connections: number;
  /** Per counted listener (never the admin listener, per-worker copies or ignored listeners). */
  readonly listeners?: ReadonlyMap<string, ListenerCounts>;
  /** Connections ever accepted on the counted listeners: its growth means new traffic still arrives. */
  readonly accepted?: number;
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
  /** Listener names (stat prefixes) never counted, matched exactly; with `http`, connection managers' stat prefixes. */
  readonly ignoreListeners: ReadonlySet<string>;
  /** Also read the listeners' accepted-connection counters: `required` for --quiet-period, `if-available` for a report. */
  readonly countAccepted: AcceptedCounting;
}

/**
 * A quiet period judged without the counters would read "no new connections": there they are
 * `required`, and a reading without them fails. A report takes them `if-available`.
 */
export type AcceptedCounting = 'no' | 'if-available' | 'required';

export function createEnvoyControl(admin: EnvoyAdmin, counting: ConnectionCounting): EnvoyControl {
  const http = counting.source === 'http';
  const needsListeners = counting.source === 'listeners' || counting.countAccepted !== 'no';
  const filter = http ? HTTP_STATS_FILTER : counting.source === 'listeners' ? LISTENER_STATS_FILTER : needsListeners ? TOTAL_AND_LISTENER_STATS_FILTER : TOTAL_CONNECTIONS_FILTER;
  // Sent unencoded, as Envoy's own docs write it; Envoy decodes either form.
  const statsPath = `/stats?filter=${filter}&format=json`;
  return {
    async failHealthCheck(signal, timeoutMs) {
      await admin.post(HEALTHCHECK_FAIL_PATH, signal, timeoutMs);
    },
    async startGracefulDrain(signal, timeoutMs) {
      await admin.post(GRACEFUL_DRAIN_PATH, signal, timeoutMs);
    },
    async readConnections(signal, timeoutMs) {
      const stats = parseStatsJson(await admin.get(statsPath, signal, timeoutMs));
      if (http) return { connections: sumHttpActive(stats, counting.ignoreListeners) };
      if (!needsListeners) return { connections: totalConnections(stats) };
      const total = counting.source === 'total' ? totalConnections(stats) : undefined;
      const required = counting.countAccepted === 'required';
      let listeners: Map<string, ListenerCounts>;
      try {
        listeners = countByListener(stats, counting.ignoreListeners);
      } catch (error) {
        // A report shows what it can: the total without the listeners.
        if (total === undefined || required) throw error;
        return { connections: total };
      }
      const connections = total ?? sumActive(listeners);
      if (counting.countAccepted === 'no') return { connections, listeners };
      try {
        return { connections, listeners, accepted: sumAccepted(listeners) };
      } catch (error) {
        if (required) throw error;
        return { connections, listeners };
      }
    },
    async readServerState(signal) {
      const body = await admin.get(SERVER_INFO_PATH, signal);
      let state: unknown;
      try {
        state = (JSON.parse(body) as { state?: unknown }).state;
      } catch (error) {
        throw new AdminError('ESM_ADMIN_BAD_RESPONSE', `${SERVER_INFO_PATH} returned a body that is not JSON`, false, { cause: error });
      }
      if (typeof state !== 'string') throw new AdminError('ESM_ADMIN_BAD_RESPONSE', `${SERVER_INFO_PATH} has no state`, false);
      return state;
    },
  };
}

/** What every command that talks to Envoy is configured with. */
export interface EnvoyConnection {
  readonly adminAddress: AdminAddress;
  readonly adminTimeoutMs: number;
  readonly connections: ConnectionSource;
  readonly ignoreListeners: ReadonlySet<string>;
}

/** Opens the admin connection, hands Envoy to `use`, and closes the connection however `use` ends. */
export async function withEnvoy<T>(config: EnvoyConnection, countAccepted: AcceptedCounting, use: (envoy: EnvoyControl) => Promise<T>): Promise<T> {
  const admin = await createAdminClient({ address: config.adminAddress, timeoutMs: config.adminTimeoutMs });
  try {
    return await use(createEnvoyControl(admin, { source: config.connections, ignoreListeners: config.ignoreListeners, countAccepted }));
  } finally {
    await admin.close();
  }
}
