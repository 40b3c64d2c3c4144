// The drain's configuration: each setting's environment variable, default and parser, the checked
// `ShutdownConfig` with its cross-setting rules, and the same configuration read from the
// environment alone. The command line (cli/shutdown-options.ts) adds a flag and help to each
// setting; values are validated here, before any I/O.
import { DEFAULT_READY_FILE } from '../handoff/ready-file.js';
import { parseAdminAddress, type AdminAddress } from '../envoy/address.js';
import { parseConnectionSource, type ConnectionSource } from '../envoy/stats.js';
import { parseDuration } from '../shared/duration.js';
import { UsageError } from '../shared/errors.js';
import { collectListenerNames, fromEnv, parseBoolean, parseCount, parseOptionalReadyFile, parsePositiveDuration } from '../shared/parsers.js';

/** Each setting with its variable, its default as a user would write it (none: off or empty) and its parser. */
export const DRAIN_SETTINGS = {
  adminAddress: { env: 'ENVOY_SHUTDOWN_ADMIN_ADDRESS', fallback: '127.0.0.1:19000', parse: parseAdminAddress },
  drainTimeout: { env: 'ENVOY_SHUTDOWN_DRAIN_TIMEOUT', fallback: '60s', parse: parsePositiveDuration },
  minDrainDuration: { env: 'ENVOY_SHUTDOWN_MIN_DRAIN_DURATION', fallback: '10s', parse: parseDuration },
  exitAtConnections: { env: 'ENVOY_SHUTDOWN_EXIT_AT_CONNECTIONS', fallback: '0', parse: parseCount },
  checkInterval: { env: 'ENVOY_SHUTDOWN_CHECK_INTERVAL', fallback: '1s', parse: parsePositiveDuration },
  healthCheckFailureDelay: { env: 'ENVOY_SHUTDOWN_HEALTH_CHECK_FAILURE_DELAY', fallback: '0s', parse: parseDuration },
  quietPeriod: { env: 'ENVOY_SHUTDOWN_QUIET_PERIOD', fallback: '0s', parse: parseDuration },
  ignoreIdleConnections: { env: 'ENVOY_SHUTDOWN_IGNORE_IDLE_CONNECTIONS', parse: parseBoolean },
  readyFile: { env: 'ENVOY_SHUTDOWN_READY_FILE', fallback: DEFAULT_READY_FILE, parse: parseOptionalReadyFile },
  connections: { env: 'ENVOY_SHUTDOWN_CONNECTIONS', fallback: 'total', parse: parseConnectionSource },
  /** The variable's plural name: it holds a comma-separated list. */
  ignoreListener: { env: 'ENVOY_SHUTDOWN_IGNORE_LISTENERS', parse: collectListenerNames },
  adminTimeout: { env: 'ENVOY_SHUTDOWN_ADMIN_TIMEOUT', fallback: '2s', parse: parsePositiveDuration },
  requireEnvoyPrestop: { env: 'ENVOY_SHUTDOWN_REQUIRE_ENVOY_PRESTOP', parse: parseBoolean },
  envoyPrestopWait: { env: 'ENVOY_SHUTDOWN_ENVOY_PRESTOP_WAIT', fallback: '10s', parse: parseDuration },
} as const;

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

/** Each setting's parsed value, keyed like `DRAIN_SETTINGS`, before the rules below. */
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
 * The configuration from the environment alone, with the same variables, parsers and defaults as
 * the command line: the manager runs the drain itself in native-sidecar mode, where no command
 * line reaches it.
 */
export function shutdownConfigFromEnv(env: NodeJS.ProcessEnv, readyFile: string): ShutdownConfig {
  const read = <T>(setting: { readonly env: string; readonly fallback?: string; readonly parse: (text: string) => T }): T => {
    const text = env[setting.env];
    return text === undefined ? setting.parse(setting.fallback ?? 'false') : fromEnv(setting.env, text, setting.parse);
  };
  const S = DRAIN_SETTINGS;
  const ignored = env[S.ignoreListener.env];
  return shutdownConfig({
    adminAddress: read(S.adminAddress),
    drainTimeout: read(S.drainTimeout),
    minDrainDuration: read(S.minDrainDuration),
    exitAtConnections: read(S.exitAtConnections),
    checkInterval: read(S.checkInterval),
    healthCheckFailureDelay: read(S.healthCheckFailureDelay),
    quietPeriod: read(S.quietPeriod),
    ignoreIdleConnections: read(S.ignoreIdleConnections),
    readyFile,
    connections: read(S.connections),
    ignoreListener: ignored === undefined ? [] : fromEnv(S.ignoreListener.env, ignored, (text) => collectListenerNames(text)),
    adminTimeout: read(S.adminTimeout),
    envoyPrestopWait: 0,
  });
}
