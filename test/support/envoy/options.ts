// Options of the Envoy stand-in, their defaults (Envoy's own where Envoy has one) and validation.
// Everything is checked before any socket opens, so a bad fixture fails with a clear message.

export type DrainStrategy = 'immediate' | 'gradual';
export type DrainType = 'DEFAULT' | 'MODIFY_ONLY';
export type TrafficDirection = 'INBOUND' | 'OUTBOUND' | 'UNSPECIFIED';
export type InitState = 'PRE_INITIALIZING' | 'INITIALIZING' | 'LIVE';
export type ServerState = InitState | 'DRAINING';

export interface ListenerSpec {
  /** The stat_prefix: stats are listener.<name>.* (and http.<name>.* for http listeners). */
  name: string;
  /** http: codec AUTO (HTTP/1.1 and prior-knowledge HTTP/2 on one port); tcp: echo, never drained. */
  kind: 'http' | 'tcp';
  host?: string;
  port?: number;
  drainType?: DrainType;
  responseDelayMs?: number;
  /** Path answered by the HTTP health check filter: 200 while healthy, 503 after /healthcheck/fail. */
  healthCheckPath?: string;
  trafficDirection?: TrafficDirection;
}

export type AdminAddressOptions = { host?: string; port?: number } | { unixSocket: string };

export interface EnvoyStandInOptions {
  admin?: AdminAddressOptions;
  listeners?: ListenerSpec[];
  workers?: number;
  statsFlushIntervalMs?: number;
  statsFlushOnAdmin?: boolean;
  drainStrategy?: DrainStrategy;
  drainTimeSeconds?: number;
  httpDrainTimeoutMs?: number;
  idleTimeoutMs?: number;
  version?: string;
  initialState?: InitState;
}

export interface AdminCall {
  method: string;
  path: string;
  query: string;
  time: number;
}

export interface ResolvedListenerSpec {
  name: string;
  kind: 'http' | 'tcp';
  host: string;
  port: number;
  drainType: DrainType;
  responseDelayMs: number;
  healthCheckPath: string | undefined;
  trafficDirection: TrafficDirection;
}

export type ResolvedAdminAddress = { host: string; port: number } | { unixSocket: string };

export interface ResolvedOptions {
  admin: ResolvedAdminAddress;
  listeners: ResolvedListenerSpec[];
  workers: number;
  statsFlushIntervalMs: number;
  statsFlushOnAdmin: boolean;
  drainStrategy: DrainStrategy;
  drainTimeSeconds: number;
  httpDrainTimeoutMs: number;
  idleTimeoutMs: number;
  version: string;
  initialState: InitState;
}

/** Envoy's defaults: --concurrency is the core count, but two workers are enough to show per-worker stats. */
export const DEFAULTS = {
  host: '127.0.0.1',
  workers: 2,
  /** bootstrap stats_flush_interval */
  statsFlushIntervalMs: 5_000,
  /** --drain-time-s */
  drainTimeSeconds: 600,
  /** HttpConnectionManager drain_timeout */
  httpDrainTimeoutMs: 5_000,
  /** HttpConnectionManager common_http_protocol_options.idle_timeout; 0 disables it, as in Envoy. */
  idleTimeoutMs: 3_600_000,
  version: '1.36.2',
} as const;

export function resolveOptions(options: EnvoyStandInOptions = {}): ResolvedOptions {
  const errors: string[] = [];
  const nonNegative = (field: string, value: number | undefined, fallback: number): number => {
    if (value === undefined) return fallback;
    if (!Number.isFinite(value) || value < 0) errors.push(`${field} must be a finite number >= 0, got ${value}`);
    return value;
  };

  const workers = options.workers ?? DEFAULTS.workers;
  if (!Number.isInteger(workers) || workers < 1) errors.push(`workers must be an integer >= 1, got ${workers}`);
  const statsFlushIntervalMs = nonNegative('statsFlushIntervalMs', options.statsFlushIntervalMs, DEFAULTS.statsFlushIntervalMs);
  if (statsFlushIntervalMs === 0) errors.push('statsFlushIntervalMs must be > 0');
  // Envoy refuses a bootstrap that sets both: flushing on admin replaces the flush timer.
  if (options.statsFlushOnAdmin === true && options.statsFlushIntervalMs !== undefined) {
    errors.push('statsFlushOnAdmin and statsFlushIntervalMs are exclusive, as stats_flush_on_admin and stats_flush_interval are');
  }

  const seen = new Set<string>();
  const listeners = (options.listeners ?? []).map((spec, index): ResolvedListenerSpec => {
    if (!/^[A-Za-z0-9_.-]+$/.test(spec.name)) errors.push(`listeners[${index}].name is not a valid stat prefix: "${spec.name}"`);
    // 'admin' would collide with the admin listener's own listener.admin.* stats.
    if (spec.name === 'admin' || seen.has(spec.name)) errors.push(`listeners[${index}].name "${spec.name}" is taken`);
    seen.add(spec.name);
    if (spec.kind !== 'http' && spec.kind !== 'tcp') errors.push(`listeners[${index}].kind must be http or tcp`);
    if (spec.healthCheckPath !== undefined && spec.kind !== 'http') errors.push(`listeners[${index}].healthCheckPath needs kind http`);
    return {
      name: spec.name,
      kind: spec.kind,
      host: spec.host ?? DEFAULTS.host,
      port: nonNegative(`listeners[${index}].port`, spec.port, 0),
      drainType: spec.drainType ?? 'DEFAULT',
      responseDelayMs: nonNegative(`listeners[${index}].responseDelayMs`, spec.responseDelayMs, 0),
      healthCheckPath: spec.healthCheckPath,
      trafficDirection: spec.trafficDirection ?? 'UNSPECIFIED',
    };
  });

  const admin: ResolvedAdminAddress =
    options.admin !== undefined && 'unixSocket' in options.admin
      ? { unixSocket: options.admin.unixSocket }
      : {
          host: options.admin?.host ?? DEFAULTS.host,
          port: nonNegative('admin.port', options.admin?.port, 0),
        };

  const resolved: ResolvedOptions = {
    admin,
    listeners,
    workers,
    statsFlushIntervalMs,
    statsFlushOnAdmin: options.statsFlushOnAdmin ?? false,
    drainStrategy: options.drainStrategy ?? 'gradual',
    drainTimeSeconds: nonNegative('drainTimeSeconds', options.drainTimeSeconds, DEFAULTS.drainTimeSeconds),
    httpDrainTimeoutMs: nonNegative('httpDrainTimeoutMs', options.httpDrainTimeoutMs, DEFAULTS.httpDrainTimeoutMs),
    idleTimeoutMs: nonNegative('idleTimeoutMs', options.idleTimeoutMs, DEFAULTS.idleTimeoutMs),
    version: options.version ?? DEFAULTS.version,
    initialState: options.initialState ?? 'LIVE',
  };
  if (!['immediate', 'gradual'].includes(resolved.drainStrategy)) errors.push(`drainStrategy must be immediate or gradual`);
  if (!/^\d+\.\d+\.\d+/.test(resolved.version)) errors.push(`version must look like 1.36.2, got "${resolved.version}"`);
  if (errors.length > 0) throw new TypeError(`invalid EnvoyStandInOptions:\n  ${errors.join('\n  ')}`);
  return resolved;
}
