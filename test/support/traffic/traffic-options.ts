// The traffic stand-in's options, their defaults in one place, and validation before any socket opens.
import type { Endpoint } from './load-balancer.js';

export interface TrafficOptions {
  /** The pod being terminated (an HTTP listener of its Envoy). */
  readonly terminating: Endpoint;
  /** Another pod, where the LB sends NEW connections once it has deprogrammed the terminating one. */
  readonly healthy: Endpoint;
  /** Each keeps one HTTP/1.1 keep-alive connection and sends requests back to back. */
  readonly http1Clients?: number;
  /** Each keeps one h2c (prior knowledge) session. */
  readonly http2Clients?: number;
  /** Concurrent request loops per HTTP/2 session. */
  readonly streamsPerSession?: number;
  /** Pause between one loop's requests. */
  readonly thinkTimeMs?: number;
  /** No complete answer by then is a 'timeout' failure; also bounds stop(). */
  readonly requestTimeoutMs?: number;
  /** Connection churn: every N ms one client (round robin) reconnects through the LB when idle. 0 disables. */
  readonly reconnectEveryMs?: number;
  readonly path?: string;
}

export type ResolvedTrafficOptions = Required<TrafficOptions>;

const TRAFFIC_DEFAULTS = {
  http1Clients: 4,
  http2Clients: 2,
  streamsPerSession: 2,
  thinkTimeMs: 5,
  requestTimeoutMs: 10_000,
  reconnectEveryMs: 250,
  path: '/',
} as const;

export function resolveTrafficOptions(options: TrafficOptions): ResolvedTrafficOptions {
  const resolved: ResolvedTrafficOptions = { ...TRAFFIC_DEFAULTS, ...options };
  const errors: string[] = [];
  const integer = (field: keyof ResolvedTrafficOptions, min: number): void => {
    const value = resolved[field];
    if (typeof value !== 'number' || !Number.isInteger(value) || value < min) errors.push(`${field} must be an integer >= ${min}, got ${String(value)}`);
  };
  integer('http1Clients', 0);
  integer('http2Clients', 0);
  integer('streamsPerSession', 1);
  integer('thinkTimeMs', 0);
  integer('requestTimeoutMs', 1);
  integer('reconnectEveryMs', 0);
  if (resolved.http1Clients + resolved.http2Clients === 0) errors.push('at least one client is needed');
  if (!resolved.path.startsWith('/')) errors.push(`path must start with /, got "${resolved.path}"`);
  for (const pod of ['terminating', 'healthy'] as const) {
    const { host, port } = resolved[pod];
    if (host === '' || !Number.isInteger(port) || port < 1 || port > 65_535) errors.push(`${pod} must be a host and a port 1-65535, got ${host}:${port}`);
  }
  if (errors.length > 0) throw new TypeError(`invalid TrafficOptions:\n  ${errors.join('\n  ')}`);
  return resolved;
}
