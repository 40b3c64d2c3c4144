// The three things the drain needs from Envoy, expressed over its admin API.
import type { EnvoyAdmin } from './admin-client.js';
import {
  type ConnectionSource,
  type ListenerCounts,
  LISTENER_STATS_FILTER,
  TOTAL_CONNECTIONS_FILTER,
  countByListener,
  parseStatsJson,
  sumActive,
  totalConnections,
} from './stats.js';

export const HEALTHCHECK_FAIL_PATH = '/healthcheck/fail';
/** `graceful`: connections are told to close (Connection: close, GOAWAY) while listeners keep accepting; `skip_exit`: listeners stay open at the end. */
export const GRACEFUL_DRAIN_PATH = '/drain_listeners?graceful&skip_exit';

export interface ConnectionReading {
  /** The number the drain decision uses. */
  readonly connections: number;
  /** Per counted listener, when the source is `listeners`. */
  readonly listeners?: ReadonlyMap<string, ListenerCounts>;
}

export interface EnvoyControl {
  failHealthCheck(signal?: AbortSignal): Promise<void>;
  startGracefulDrain(signal?: AbortSignal): Promise<void>;
  readConnections(signal?: AbortSignal): Promise<ConnectionReading>;
}

export interface ConnectionCounting {
  readonly source: ConnectionSource;
  /** Listener names (stat prefixes) never counted, matched exactly. */
  readonly ignoreListeners: ReadonlySet<string>;
}

export function createEnvoyControl(admin: EnvoyAdmin, counting: ConnectionCounting): EnvoyControl {
  // Sent unencoded, as Envoy's own docs write it; Envoy decodes either form.
  const statsPath = `/stats?filter=${counting.source === 'total' ? TOTAL_CONNECTIONS_FILTER : LISTENER_STATS_FILTER}&format=json`;
  return {
    async failHealthCheck(signal) {
      await admin.post(HEALTHCHECK_FAIL_PATH, signal);
    },
    async startGracefulDrain(signal) {
      await admin.post(GRACEFUL_DRAIN_PATH, signal);
    },
    async readConnections(signal) {
      const stats = parseStatsJson(await admin.get(statsPath, signal));
      if (counting.source === 'total') return { connections: totalConnections(stats) };
      const listeners = countByListener(stats, counting.ignoreListeners);
      return { connections: sumActive(listeners), listeners };
    },
  };
}
