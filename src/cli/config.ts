// Every default, every environment variable name (`shutdown`'s from its option table), and the
// `shutdown` configuration with its cross-option rules. Values are validated here, before any I/O.
import type { AdminAddress } from '../envoy/address.js';
import type { ConnectionSource } from '../envoy/stats.js';
import { UsageError } from '../shared/errors.js';
import { collectListenerNames } from '../shared/parsers.js';
import { SHUTDOWN_OPTIONS, type ShutdownOptionName, type ShutdownOptionSpec } from './shutdown-options.js';

const OPTIONS = SHUTDOWN_OPTIONS;

/** Defaults of the options other commands share with `shutdown` (whose own live in its table), and of theirs. */
export const DEFAULTS = {
  adminAddress: OPTIONS.adminAddress.fallback,
  readyFile: OPTIONS.readyFile.fallback,
  connections: OPTIONS.connections.fallback satisfies ConnectionSource,
  adminTimeout: OPTIONS.adminTimeout.fallback,
  drainStartTimeout: '15s',
  /** The port Envoy's preStop httpGet calls; Envoy Gateway's choice, kept so manifests carry over. */
  port: 19002,
  readyTimeout: '70s',
  maxWaiters: 1000,
  requestTimeout: '10s',
  logLevel: 'info',
  logFormat: 'json',
} as const;

/** `shutdown`'s variables, keyed like its options: an option with a variable needs no line here. */
type ShutdownEnv = {
  readonly [K in ShutdownOptionName as (typeof OPTIONS)[K] extends { readonly env: string } ? K : never]: (typeof OPTIONS)[K] extends { readonly env: infer E } ? E : never;
};
const SHUTDOWN_ENV = Object.fromEntries(
  Object.entries(OPTIONS).flatMap(([key, option]: [string, ShutdownOptionSpec]) => (option.env === undefined ? [] : [[key, option.env]])),
) as ShutdownEnv;

/** Each option's environment variable. Flags win over these; these win over defaults. */
export const ENV = {
  ...SHUTDOWN_ENV,
  /** The variable's plural name: it holds a comma-separated list. */
  ignoreListeners: OPTIONS.ignoreListener.env,
  drainStartTimeout: 'ENVOY_SHUTDOWN_DRAIN_START_TIMEOUT',
  hookToken: 'ENVOY_SHUTDOWN_HOOK_TOKEN',
  drainEndpoint: 'ENVOY_SHUTDOWN_DRAIN_ENDPOINT',
  events: 'ENVOY_SHUTDOWN_EVENTS',
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
  /** Once the drain may end (minimum drain and quiet period over), count only connections with a request in flight. */
  readonly ignoreIdleConnections: boolean;
  /** Undefined: no ready file (sidecar-less mode: Envoy's SIGTERM follows the hook's return). */
  readonly readyFile: string | undefined;
  readonly connections: ConnectionSource;
  readonly ignoreListeners: ReadonlySet<string>;
  /** Listeners served only by these connection managers are not counted either (the drop-ins' stats and health listeners). */
  readonly ignoreConnectionManagers?: ReadonlySet<string>;
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
  readonly ignoreIdleConnections?: boolean;
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
    throw new UsageError('--require-envoy-prestop needs a ready file: the envoy-prestop record is kept beside it');
  }
  if (options.quietPeriod >= options.drainTimeout) {
    throw new UsageError('--quiet-period must be shorter than --drain-timeout, or the drain could only end at its timeout');
  }
  const ignoreIdleConnections = options.ignoreIdleConnections === true;
  if (ignoreIdleConnections && options.quietPeriod === 0) {
    throw new UsageError('--ignore-idle-connections needs --quiet-period above 0: a connection is idle once no request arrived for that long');
  }
  return {
    adminAddress: options.adminAddress,
    drainTimeoutMs: options.drainTimeout,
    minDrainMs: options.minDrainDuration,
    exitAtConnections: options.exitAtConnections,
    checkIntervalMs: options.checkInterval,
    healthCheckFailureDelayMs: options.healthCheckFailureDelay,
    quietPeriodMs: options.quietPeriod,
    ignoreIdleConnections,
    readyFile,
    connections: options.connections,
    ignoreListeners: new Set(options.ignoreListener),
    adminTimeoutMs: options.adminTimeout,
    requireEnvoyPrestop: options.requireEnvoyPrestop === true,
    envoyPrestopWaitMs: options.envoyPrestopWait,
    startedBy: options.requireEnvoyPrestop === true ? 'hook' : 'manual',
  };
}

/**
 * The `shutdown` configuration from the environment alone, with the same variables, parsers and
 * defaults as the command line: the manager runs the drain itself in native-sidecar mode, where
 * no command line reaches it.
 */
export function shutdownConfigFromEnv(env: NodeJS.ProcessEnv, readyFile: string): ShutdownConfig {
  const read = <K extends EnvRead>(key: K): Parsed<K> => {
    const option: ShutdownOptionSpec = OPTIONS[key];
    const parse = option.parse as (text: string) => Parsed<K>;
    const name = option.env ?? '';
    const text = env[name];
    return text === undefined ? parse(option.fallback ?? 'false') : fromEnv(name, text, parse);
  };
  return shutdownConfig({
    adminAddress: read('adminAddress'),
    drainTimeout: read('drainTimeout'),
    minDrainDuration: read('minDrainDuration'),
    exitAtConnections: read('exitAtConnections'),
    checkInterval: read('checkInterval'),
    healthCheckFailureDelay: read('healthCheckFailureDelay'),
    quietPeriod: read('quietPeriod'),
    ignoreIdleConnections: read('ignoreIdleConnections'),
    readyFile,
    connections: read('connections'),
    ignoreListener: env[ENV.ignoreListeners] === undefined ? [] : fromEnv(ENV.ignoreListeners, env[ENV.ignoreListeners] ?? '', (text) => collectListenerNames(text)),
    adminTimeout: read('adminTimeout'),
    envoyPrestopWait: 0,
  });
}

/** The options the manager's env-only drain reads (the ready file and the hook's own are its to set). */
type EnvRead = Exclude<ShutdownOptionName, 'readyFile' | 'noReadyFile' | 'ignoreListener' | 'requireEnvoyPrestop' | 'envoyPrestopWait' | 'dryRun' | 'output'>;
type Parsed<K extends EnvRead> = (typeof OPTIONS)[K] extends { readonly parse: (text: string) => infer R } ? R : never;

/** Parses one environment variable, naming it in the error. */
export function fromEnv<T>(name: string, text: string, parse: (text: string) => T): T {
  try {
    return parse(text);
  } catch (error) {
    if (error instanceof UsageError) throw new UsageError(`${name}: ${error.message}`);
    throw error;
  }
}
