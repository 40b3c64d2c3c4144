// Every default, every environment variable name and every cross-option rule, in one place.
// Values are validated here, before any I/O.
import { parseAdminAddress, type AdminAddress } from './envoy/address.js';
import { parseHookToken } from './manager/hook-token.js';
import { CONNECTION_SOURCES, type ConnectionSource } from './envoy/stats.js';
import { UsageError } from './errors.js';
import { formatDuration, parseDuration } from './duration.js';
import { isIP } from 'node:net';
import { DEFAULT_READY_FILE } from './ready-file.js';

export const DEFAULTS = {
  adminAddress: '127.0.0.1:19000',
  drainTimeout: '60s',
  minDrainDuration: '10s',
  exitAtConnections: 0,
  checkInterval: '1s',
  healthCheckFailureDelay: '0s',
  quietPeriod: '0s',
  envoyPrestopWait: '10s',
  drainStartTimeout: '15s',
  readyFile: DEFAULT_READY_FILE,
  connections: 'total' as ConnectionSource,
  adminTimeout: '2s',
  /** The port Envoy's preStop httpGet calls; Envoy Gateway's choice, kept so manifests carry over. */
  port: 19002,
  readyTimeout: '70s',
  maxWaiters: 1000,
  requestTimeout: '10s',
  logLevel: 'info',
  logFormat: 'json',
} as const;

/** Each option's environment variable. Flags win over these; these win over defaults. */
export const ENV = {
  adminAddress: 'ENVOY_SHUTDOWN_ADMIN_ADDRESS',
  drainTimeout: 'ENVOY_SHUTDOWN_DRAIN_TIMEOUT',
  minDrainDuration: 'ENVOY_SHUTDOWN_MIN_DRAIN_DURATION',
  exitAtConnections: 'ENVOY_SHUTDOWN_EXIT_AT_CONNECTIONS',
  checkInterval: 'ENVOY_SHUTDOWN_CHECK_INTERVAL',
  healthCheckFailureDelay: 'ENVOY_SHUTDOWN_HEALTH_CHECK_FAILURE_DELAY',
  quietPeriod: 'ENVOY_SHUTDOWN_QUIET_PERIOD',
  requireEnvoyPrestop: 'ENVOY_SHUTDOWN_REQUIRE_ENVOY_PRESTOP',
  envoyPrestopWait: 'ENVOY_SHUTDOWN_ENVOY_PRESTOP_WAIT',
  drainStartTimeout: 'ENVOY_SHUTDOWN_DRAIN_START_TIMEOUT',
  hookToken: 'ENVOY_SHUTDOWN_HOOK_TOKEN',
  drainEndpoint: 'ENVOY_SHUTDOWN_DRAIN_ENDPOINT',
  readyFile: 'ENVOY_SHUTDOWN_READY_FILE',
  connections: 'ENVOY_SHUTDOWN_CONNECTIONS',
  ignoreListeners: 'ENVOY_SHUTDOWN_IGNORE_LISTENERS',
  adminTimeout: 'ENVOY_SHUTDOWN_ADMIN_TIMEOUT',
  port: 'ENVOY_SHUTDOWN_PORT',
  host: 'ENVOY_SHUTDOWN_HOST',
  readyTimeout: 'ENVOY_SHUTDOWN_READY_TIMEOUT',
  maxWaiters: 'ENVOY_SHUTDOWN_MAX_WAITERS',
  requestTimeout: 'ENVOY_SHUTDOWN_REQUEST_TIMEOUT',
  statusInterval: 'ENVOY_SHUTDOWN_STATUS_INTERVAL',
  logLevel: 'ENVOY_SHUTDOWN_LOG_LEVEL',
  logFormat: 'ENVOY_SHUTDOWN_LOG_FORMAT',
  /** Where a preStop hook copies its log lines (kubelet discards a hook's own output). */
  hookLogPath: 'ENVOY_SHUTDOWN_HOOK_LOG_PATH',
} as const;

/** PID 1's stdout: what `kubectl logs` shows for the container the hook runs in. */
export const DEFAULT_HOOK_LOG_PATH = '/proc/1/fd/1';

export interface ShutdownConfig {
  readonly adminAddress: AdminAddress;
  readonly drainTimeoutMs: number;
  readonly minDrainMs: number;
  readonly exitAtConnections: number;
  readonly checkIntervalMs: number;
  readonly healthCheckFailureDelayMs: number;
  readonly quietPeriodMs: number;
  /** Undefined: no ready file (sidecar-less mode: Envoy's SIGTERM follows the hook's return). */
  readonly readyFile: string | undefined;
  readonly connections: ConnectionSource;
  readonly ignoreListeners: ReadonlySet<string>;
  readonly adminTimeoutMs: number;
  /** Drain only once the manager has seen Envoy's own preStop hook: the pod is really terminating. */
  readonly requireEnvoyPrestop: boolean;
  readonly envoyPrestopWaitMs: number;
  /** Recorded in the drain-state file for `status`. */
  readonly startedBy: 'hook' | 'manual';
}

/** The shape commander hands over once each value went through its parser below. */
export interface ShutdownOptions {
  readonly adminAddress: AdminAddress;
  readonly drainTimeout: number;
  readonly minDrainDuration: number;
  readonly exitAtConnections: number;
  readonly checkInterval: number;
  readonly healthCheckFailureDelay: number;
  readonly quietPeriod: number;
  /** `false` from --no-ready-file; '' from --ready-file "". */
  readonly readyFile: string | false;
  readonly connections: ConnectionSource;
  readonly ignoreListener: readonly string[];
  readonly adminTimeout: number;
  readonly requireEnvoyPrestop?: boolean;
  readonly envoyPrestopWait: number;
}

export function shutdownConfig(options: ShutdownOptions): ShutdownConfig {
  if (options.drainTimeout === 0) throw new UsageError('--drain-timeout must be greater than 0');
  if (options.minDrainDuration > options.drainTimeout) {
    throw new UsageError('--min-drain-duration must not be longer than --drain-timeout');
  }
  if (options.healthCheckFailureDelay >= options.drainTimeout) {
    throw new UsageError('--health-check-failure-delay must be shorter than --drain-timeout, or the health check would never fail');
  }
  const readyFile = options.readyFile === false || options.readyFile === '' ? undefined : options.readyFile;
  if (readyFile === undefined && options.requireEnvoyPrestop === true) {
    throw new UsageError('--require-envoy-prestop needs a ready file: the proof of termination is kept beside it');
  }
  if (options.quietPeriod >= options.drainTimeout) {
    throw new UsageError('--quiet-period must be shorter than --drain-timeout, or the drain could only end at its timeout');
  }
  return {
    adminAddress: options.adminAddress,
    drainTimeoutMs: options.drainTimeout,
    minDrainMs: options.minDrainDuration,
    exitAtConnections: options.exitAtConnections,
    checkIntervalMs: options.checkInterval,
    healthCheckFailureDelayMs: options.healthCheckFailureDelay,
    quietPeriodMs: options.quietPeriod,
    readyFile,
    connections: options.connections,
    ignoreListeners: new Set(options.ignoreListener),
    adminTimeoutMs: options.adminTimeout,
    requireEnvoyPrestop: options.requireEnvoyPrestop === true,
    envoyPrestopWaitMs: options.envoyPrestopWait,
    startedBy: options.requireEnvoyPrestop === true ? 'hook' : 'manual',
  };
}

/** Booleans in environment variables: true/false, 1/0, yes/no. */
export function parseBoolean(text: string): boolean {
  const value = text.trim().toLowerCase();
  if (['true', '1', 'yes'].includes(value)) return true;
  if (['false', '0', 'no', ''].includes(value)) return false;
  throw new UsageError(`"${text}" is not a boolean: expected true or false`);
}

export interface ManagerConfig {
  /** Undefined: every interface, IPv4 and IPv6. */
  readonly host: string | undefined;
  readonly port: number;
  readonly readyTimeoutMs: number;
  readonly readyFile: string;
  readonly maxWaiters: number;
  readonly requestTimeoutMs: number;
  /** 0: off. Otherwise release /shutdown/ready waiters when no drain runs this long after the first arrived. */
  readonly drainStartTimeoutMs: number;
  /** Proves a request comes from the pod's own hook (kubelet sends it as a header). Never logged. */
  readonly hookToken: string | undefined;
  /** Native-sidecar mode: serve /shutdown/drain, which runs this drain for the pod's own hook. */
  readonly drain: ShutdownConfig | undefined;
}

export interface ManagerOptions {
  readonly host?: string;
  readonly port: number;
  readonly readyTimeout: number;
  readonly readyFile: string;
  readonly maxWaiters: number;
  readonly requestTimeout: number;
  readonly drainStartTimeout: number;
  readonly drainEndpoint?: boolean;
}

export interface StatusConfig {
  readonly adminAddress: AdminAddress;
  readonly readyFile: string;
  readonly connections: ConnectionSource;
  readonly ignoreListeners: ReadonlySet<string>;
  readonly adminTimeoutMs: number;
  readonly intervalMs: number;
  readonly output: 'text' | 'json';
  readonly watch: boolean;
}

export interface StatusOptions {
  readonly adminAddress: AdminAddress;
  readonly readyFile: string;
  readonly connections: ConnectionSource;
  readonly ignoreListener: readonly string[];
  readonly adminTimeout: number;
  readonly interval: number;
  readonly output: 'text' | 'json';
  readonly watch?: boolean;
}

export function statusConfig(options: StatusOptions): StatusConfig {
  return {
    adminAddress: options.adminAddress,
    readyFile: options.readyFile,
    connections: options.connections,
    ignoreListeners: new Set(options.ignoreListener),
    adminTimeoutMs: options.adminTimeout,
    intervalMs: options.interval,
    output: options.output,
    watch: options.watch === true,
  };
}

/**
 * `env` is the container's environment: when it also sets the drain timeout (the chart passes
 * the same variables to both commands), a ready timeout that would cut the drain short is refused
 * at start-up, not discovered when the pod terminates.
 */
export function managerConfig(options: ManagerOptions, env: NodeJS.ProcessEnv = process.env): ManagerConfig {
  const drainTimeoutText = env[ENV.drainTimeout];
  if (drainTimeoutText !== undefined && drainTimeoutText !== '') {
    let drainTimeoutMs: number;
    try {
      drainTimeoutMs = parseDuration(drainTimeoutText);
    } catch (error) {
      throw new UsageError(`${ENV.drainTimeout}: ${(error as Error).message}`);
    }
    if (options.readyTimeout <= drainTimeoutMs) {
      throw new UsageError(`--ready-timeout (${formatDuration(options.readyTimeout)}) must be longer than the drain timeout ${ENV.drainTimeout}=${drainTimeoutText}`);
    }
  }
  const tokenText = env[ENV.hookToken];
  const hookToken = tokenText === undefined || tokenText === '' ? undefined : fromEnv(ENV.hookToken, tokenText, parseHookToken);
  if (options.drainEndpoint === true && hookToken === undefined) {
    throw new UsageError(`--drain-endpoint needs ${ENV.hookToken}: without it anyone who can reach the pod could start a drain`);
  }
  return {
    host: options.host,
    port: options.port,
    readyTimeoutMs: options.readyTimeout,
    readyFile: options.readyFile,
    maxWaiters: options.maxWaiters,
    requestTimeoutMs: options.requestTimeout,
    drainStartTimeoutMs: options.drainStartTimeout,
    hookToken,
    drain: options.drainEndpoint === true ? { ...shutdownConfigFromEnv(env, options.readyFile), startedBy: 'hook' } : undefined,
  };
}

/**
 * The `shutdown` configuration from the environment alone, with the same variables, parsers and
 * defaults as the command line: the manager runs the drain itself in native-sidecar mode, where
 * no command line reaches it.
 */
export function shutdownConfigFromEnv(env: NodeJS.ProcessEnv, readyFile: string): ShutdownConfig {
  const read = <T>(key: keyof typeof ENV, parse: (text: string) => T, fallback: string): T => {
    const text = env[ENV[key]];
    return text === undefined ? parse(fallback) : fromEnv(ENV[key], text, parse);
  };
  return shutdownConfig({
    adminAddress: read('adminAddress', parseAdminAddress, DEFAULTS.adminAddress),
    drainTimeout: read('drainTimeout', parsePositiveDuration, DEFAULTS.drainTimeout),
    minDrainDuration: read('minDrainDuration', parseDuration, DEFAULTS.minDrainDuration),
    exitAtConnections: read('exitAtConnections', parseCount, String(DEFAULTS.exitAtConnections)),
    checkInterval: read('checkInterval', parsePositiveDuration, DEFAULTS.checkInterval),
    healthCheckFailureDelay: read('healthCheckFailureDelay', parseDuration, DEFAULTS.healthCheckFailureDelay),
    quietPeriod: read('quietPeriod', parseDuration, DEFAULTS.quietPeriod),
    readyFile,
    connections: read('connections', parseConnectionSource, DEFAULTS.connections),
    ignoreListener: env[ENV.ignoreListeners] === undefined ? [] : fromEnv(ENV.ignoreListeners, env[ENV.ignoreListeners] ?? '', (text) => collectListenerNames(text)),
    adminTimeout: read('adminTimeout', parsePositiveDuration, DEFAULTS.adminTimeout),
    envoyPrestopWait: 0,
  });
}

function fromEnv<T>(name: string, text: string, parse: (text: string) => T): T {
  try {
    return parse(text);
  } catch (error) {
    if (error instanceof UsageError) throw new UsageError(`${name}: ${error.message}`);
    throw error;
  }
}

export function parseHost(text: string): string {
  const host = text.trim().replace(/^\[(.*)\]$/, '$1');
  if (isIP(host) === 0) throw new UsageError(`host "${text}" is not an IP address (omit --host to listen on every interface)`);
  return host;
}

export function parseMaxWaiters(text: string): number {
  const value = parseCount(text);
  if (value < 1) throw new UsageError('--max-waiters must be at least 1');
  return value;
}

// Parsers for single values: each throws UsageError with a message naming the bad value.

export function parsePositiveDuration(text: string): number {
  const ms = parseDuration(text);
  if (ms <= 0) throw new UsageError(`duration "${text}" must be greater than 0`);
  return ms;
}

export function parseCount(text: string): number {
  const trimmed = text.trim();
  if (!/^\d+$/.test(trimmed)) throw new UsageError(`"${text}" is not a whole number of 0 or more`);
  const value = Number(trimmed);
  if (!Number.isSafeInteger(value)) throw new UsageError(`"${text}" is too large`);
  return value;
}

/** A port to listen on; 0 asks the kernel for a free one (the log says which). */
export function parseListenPort(text: string): number {
  const value = parseCount(text);
  if (value > 65_535) throw new UsageError(`port "${text}" is outside 0-65535`);
  return value;
}

export function parseConnectionSource(text: string): ConnectionSource {
  const value = text.trim();
  if (!(CONNECTION_SOURCES as readonly string[]).includes(value)) {
    throw new UsageError(`"${text}" is not a connection source: expected ${CONNECTION_SOURCES.join(' or ')}`);
  }
  return value as ConnectionSource;
}

export function parseReadyFile(text: string): string {
  if (!text.startsWith('/')) throw new UsageError(`ready file "${text}" must be an absolute path`);
  return text;
}

/** For `shutdown`: an empty path means no ready file, like --no-ready-file. */
export function parseOptionalReadyFile(text: string): string {
  return text === '' ? '' : parseReadyFile(text);
}

/** Repeatable, and comma-separated in the environment variable. Names are matched exactly. */
export function collectListenerNames(text: string, previous: readonly string[] = []): string[] {
  const names = text.split(',').map((name) => name.trim());
  if (names.some((name) => name === '')) throw new UsageError(`listener list "${text}" has an empty name`);
  return [...previous, ...names];
}

export function installConfig(dir: string, mountPath: string | undefined): { dir: string; mountPath: string } {
  for (const [what, path] of [['install directory', dir], ['--mount-path', mountPath ?? dir]] as const) {
    if (!path.startsWith('/')) throw new UsageError(`${what} "${path}" must be an absolute path`);
  }
  return { dir, mountPath: mountPath ?? dir };
}
