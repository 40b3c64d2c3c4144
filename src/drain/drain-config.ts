// The drain's configuration: the one table of `shutdown`'s settings (flag, variable, default,
// parser, help), from which commander's wiring, --help, --dry-run, the start-up log line,
// docs/reference.md's table and the native-sidecar drain's reading of the environment all follow;
// then the checked `ShutdownConfig` with its cross-setting rules. Values are validated here,
// before any I/O.

import { formatAdminAddress, parseAdminAddress } from '../envoy/address.js';
import type { EnvoyConnection } from '../envoy/envoy-control.js';
import { parseConnectionSource } from '../envoy/envoy-control.js';
import { DEFAULT_READY_FILE } from '../handoff/ready-file.js';
import { formatDuration, parseDuration } from '../shared/duration.js';
import { ENVIRONMENT } from '../shared/environment.js';
import { UsageError } from '../shared/errors.js';
import { defaultValue, type OptionSpec, type OptionValues, valuesFromEnv } from '../shared/option-spec.js';
import { collectListenerNames, parseBoolean, parseCount, parseOptionalReadyFile, parsePositiveDuration } from '../shared/parsers.js';
import type { DrainOptions } from './drain.js';

/** Each of `shutdown`'s settings; durations parse to milliseconds. Adding one: docs/design.md, "Adding a drain flag". */
export const DRAIN_SETTINGS = {
  adminAddress: {
    flags: '--admin-address <addr>',
    kind: 'value',
    env: 'ENVOY_SHUTDOWN_ADMIN_ADDRESS',
    fallback: '127.0.0.1:19000',
    parse: parseAdminAddress,
    show: formatAdminAddress,
    help: "Envoy's admin API: host:port, [v6]:port, http://host:port or unix:/path; loopback only",
    doc: "Envoy's admin API: `host:port`, `[v6]:port`, `http://host:port`, `unix:/path` (or a bare absolute path; `unix:@name` for the abstract namespace, which needs Node 24 as in the executable and image: Node 20 cannot reach it and gets a usage error). Loopback or a Unix socket only; `localhost` means `127.0.0.1`.",
  },
  drainTimeout: {
    flags: '--drain-timeout <duration>',
    kind: 'value',
    env: 'ENVOY_SHUTDOWN_DRAIN_TIMEOUT',
    fallback: '60s',
    parse: parsePositiveDuration,
    show: formatDuration,
    help: "longest drain; keep it below the pod's terminationGracePeriodSeconds and the manager's --ready-timeout",
    doc: "Longest drain. Keep it below the manager's `--ready-timeout` and the pod's grace period.",
  },
  minDrainDuration: {
    flags: '--min-drain-duration <duration>',
    kind: 'value',
    env: 'ENVOY_SHUTDOWN_MIN_DRAIN_DURATION',
    fallback: '10s',
    parse: parseDuration,
    show: formatDuration,
    help: 'never finish sooner, so load balancers stop sending new connections first',
  },
  exitAtConnections: {
    flags: '--exit-at-connections <n>',
    kind: 'value',
    env: 'ENVOY_SHUTDOWN_EXIT_AT_CONNECTIONS',
    fallback: '0',
    parse: parseCount,
    help: 'finish once the count is at or under this',
  },
  checkInterval: {
    flags: '--check-interval <duration>',
    kind: 'value',
    env: 'ENVOY_SHUTDOWN_CHECK_INTERVAL',
    fallback: '1s',
    parse: parsePositiveDuration,
    show: formatDuration,
    help: "read the count (and log progress) at least this often, unless the reads would take over 2 % of Envoy's main thread",
    doc: "Read the count at least this often, unless the reads would take over 2 % of Envoy's main thread before the drain may end (a very large configuration); one progress log line per interval.",
  },
  healthCheckFailureDelay: {
    flags: '--health-check-failure-delay <duration>',
    kind: 'value',
    env: 'ENVOY_SHUTDOWN_HEALTH_CHECK_FAILURE_DELAY',
    fallback: '0s',
    parse: parseDuration,
    show: formatDuration,
    help: 'above 0: start the drain first, fail the health check after this delay (skipped if the drain is over)',
    doc: 'Above 0: start the drain first and fail the health check after this delay, unless the drain is already over.',
  },
  quietPeriod: {
    flags: '--quiet-period <duration>',
    kind: 'value',
    env: 'ENVOY_SHUTDOWN_QUIET_PERIOD',
    fallback: '0s',
    parse: parseDuration,
    show: formatDuration,
    defaultDoc: '`0s` (off)',
    help: 'above 0: also wait until no new connection was accepted on the counted listeners for this long (0: off)',
    doc: 'Also wait until no new connection was accepted on the counted listeners for this long. See below.',
  },
  ignoreIdleConnections: {
    flags: '--ignore-idle-connections',
    kind: 'switch',
    env: 'ENVOY_SHUTDOWN_IGNORE_IDLE_CONNECTIONS',
    parse: parseBoolean,
    help: 'with --quiet-period: once the drain may end and no request arrived for the quiet period, count only connections with a request in flight',
    doc: 'Needs `--quiet-period`. Once the drain may end and no request arrived for the quiet period, count only connections with a request in flight: idle keep-alive connections no longer hold the drain. See below; the chart turns it on.',
  },
  readyFile: {
    flags: '--ready-file <path>',
    kind: 'value',
    env: 'ENVOY_SHUTDOWN_READY_FILE',
    fallback: DEFAULT_READY_FILE,
    parse: parseOptionalReadyFile,
    help: `file written when the drain ends; the manager's /shutdown/ready waits for it ("": none)`,
    doc: 'Written when the drain ends; must be on a volume both containers share (an `emptyDir`). `""` means none. A file already there that is not a ready file this tool wrote (a directory, a device, a symlink, anything else) is refused, never replaced. File name at most 219 bytes.',
  },
  noReadyFile: {
    flags: '--no-ready-file',
    kind: 'negation',
    help: "sidecar-less mode (the hook runs in Envoy's own container): write no ready file; Envoy's SIGTERM follows this command's return",
    doc: "Sidecar-less mode: no ready file; Envoy's SIGTERM follows this command's return. Refused together with `--ready-file`.",
  },
  connections: {
    flags: '--connections <source>',
    kind: 'value',
    env: 'ENVOY_SHUTDOWN_CONNECTIONS',
    fallback: 'total',
    parse: parseConnectionSource,
    help: 'total: server.total_connections; listeners: live listener gauges (faster, safer; see below)',
    doc: '`total` or `listeners`: where the count comes from (below).',
  },
  ignoreListener: {
    flags: '--ignore-listener <name>',
    kind: 'list',
    env: 'ENVOY_SHUTDOWN_IGNORE_LISTENERS',
    parse: collectListenerNames,
    defaultDoc: 'none',
    help: 'never count this listener (its stats name, exact), in --connections listeners and in new connections (--quiet-period, status); repeatable, comma-separated in the env var',
    doc: 'Never count this listener: its stats name (`listener.<name>.*`: its `stat_prefix`, else its address such as `0.0.0.0_10080`), matched exactly. Repeatable; comma-separated in the variable. With `total` it only leaves the listener out of the new connections a `--quiet-period` counts; with `total` and no quiet period it does nothing, so the flag is refused and the variable gets one warning line.',
  },
  adminTimeout: {
    flags: '--admin-timeout <duration>',
    kind: 'value',
    env: 'ENVOY_SHUTDOWN_ADMIN_TIMEOUT',
    fallback: '2s',
    parse: parsePositiveDuration,
    show: formatDuration,
    help: 'bound on each admin API call',
    doc: 'Bound on each admin API call (its answer is also capped: 2 MiB for stats, 1 MiB for any other).',
  },
  requireEnvoyPrestop: {
    flags: '--require-envoy-prestop',
    kind: 'switch',
    env: 'ENVOY_SHUTDOWN_REQUIRE_ENVOY_PRESTOP',
    parse: parseBoolean,
    help: "for the sidecar's hook: drain only once Envoy's own preStop hook has reached the manager (the pod is terminating); otherwise exit 0 and leave Envoy serving",
    doc: "For the sidecar's hook: drain only once Envoy's own preStop hook has reached the manager (the pod is terminating); otherwise exit 0 and leave Envoy serving. See [Safety by design](design.md#safety-by-design).",
  },
  envoyPrestopWait: {
    flags: '--envoy-prestop-wait <duration>',
    kind: 'value',
    env: 'ENVOY_SHUTDOWN_ENVOY_PRESTOP_WAIT',
    fallback: '10s',
    parse: parseDuration,
    show: formatDuration,
    help: "with --require-envoy-prestop: how long to wait for Envoy's preStop hook to reach the manager",
    doc: 'How long the hook waits for the envoy-prestop record. As a flag, refused without `--require-envoy-prestop`.',
  },
} as const satisfies Readonly<Record<string, OptionSpec>>;

/** Each setting's parsed value, keyed like `DRAIN_SETTINGS`, before the rules below. */
export type ShutdownOptions = OptionValues<typeof DRAIN_SETTINGS>;

/** A checked configuration: the settings (durations in milliseconds) as the drain runs with them. */
export type ShutdownConfig = Omit<ShutdownOptions, 'readyFile'> & {
  /** Undefined: no ready file (sidecar-less mode: Envoy's SIGTERM follows the hook's return). */
  readonly readyFile: string | undefined;
  /** Listeners served only by these connection managers are not counted either (the drop-ins' stats and health listeners). */
  readonly ignoreConnectionManagers?: ReadonlySet<string>;
  /** Recorded in the drain-state file for `status`. */
  readonly startedBy: 'hook' | 'manual';
  /** Where the kernel's socket counts are read instead of /proc/net (from the environment only). */
  readonly socketCountsDir?: string;
};

export function shutdownConfig(options: ShutdownOptions): ShutdownConfig {
  if (options.drainTimeout === 0) throw new UsageError('--drain-timeout must be greater than 0');
  if (options.minDrainDuration > options.drainTimeout) {
    throw new UsageError('--min-drain-duration must not be longer than --drain-timeout');
  }
  if (options.healthCheckFailureDelay >= options.drainTimeout) {
    throw new UsageError('--health-check-failure-delay must be shorter than --drain-timeout, or the health check would never fail');
  }
  const readyFile = options.readyFile === false || options.readyFile === '' ? undefined : options.readyFile;
  if (readyFile === undefined && options.requireEnvoyPrestop) {
    throw new UsageError('--require-envoy-prestop needs a ready file: the envoy-prestop record is kept beside it');
  }
  if (options.quietPeriod >= options.drainTimeout) {
    throw new UsageError('--quiet-period must be shorter than --drain-timeout, or the drain could only end at its timeout');
  }
  if (options.ignoreIdleConnections && options.quietPeriod === 0) {
    throw new UsageError('--ignore-idle-connections needs --quiet-period above 0: a connection is idle once no request arrived for that long');
  }
  return { ...options, ignoreListener: [...new Set(options.ignoreListener)], readyFile, startedBy: options.requireEnvoyPrestop ? 'hook' : 'manual' };
}

/**
 * The configuration from the environment alone, with the same variables, parsers and defaults as
 * the command line: the manager runs the drain itself in native-sidecar mode, where no command
 * line reaches it, for the pod's own hook (so no wait for that hook's record).
 */
export function shutdownConfigFromEnv(env: NodeJS.ProcessEnv, readyFile: string): ShutdownConfig {
  const options = valuesFromEnv(DRAIN_SETTINGS, env);
  return { ...shutdownConfig({ ...options, readyFile, requireEnvoyPrestop: false, envoyPrestopWait: 0 }), ...environmentOnly(env), startedBy: 'hook' };
}

/** What a configuration takes from the environment alone, never from a flag. */
export function environmentOnly(env: NodeJS.ProcessEnv): Pick<ShutdownConfig, 'socketCountsDir'> {
  const socketCountsDir = env[ENVIRONMENT.socketCountsDir];
  return socketCountsDir === undefined || socketCountsDir === '' ? {} : { socketCountsDir };
}

/** Every setting at its default, unchecked: the drop-ins start from it and set what their peer decides. */
export function defaultShutdownOptions(): ShutdownOptions {
  const options: Record<string, unknown> = {};
  for (const [key, spec] of Object.entries(DRAIN_SETTINGS)) if (spec.kind !== 'negation') options[key] = defaultValue(spec);
  // Each key was set from its own row's default, which is what ShutdownOptions reads off the row.
  return options as ShutdownOptions;
}

/** The effective configuration as a person would write it: for the start-up log line and --dry-run. */
export function describeShutdownConfig(config: ShutdownConfig): Record<string, string | number | readonly string[]> {
  const described: Record<string, string | number | readonly string[]> = {};
  for (const [key, spec] of Object.entries(DRAIN_SETTINGS)) {
    if (spec.kind === 'negation') continue;
    const value: unknown = config[key as keyof ShutdownConfig];
    described[key] =
      'show' in spec
        ? spec.show(value as never)
        : typeof value === 'number' || Array.isArray(value)
          ? (value as number | readonly string[])
          : String(value ?? 'none');
  }
  if (config.ignoreConnectionManagers !== undefined) described.ignoreConnectionManagers = [...config.ignoreConnectionManagers];
  return described;
}

/** How the drain reaches Envoy and counts; `countRequests`: also read the request stats that tell idle connections. */
export function envoyConnection(config: ShutdownConfig, countRequests = config.ignoreIdleConnections): EnvoyConnection {
  return {
    adminAddress: config.adminAddress,
    adminTimeoutMs: config.adminTimeout,
    connections: config.connections,
    ignoreListener: new Set(config.ignoreListener),
    ...(config.ignoreConnectionManagers === undefined ? {} : { ignoreConnectionManagers: config.ignoreConnectionManagers }),
    countRequests,
  };
}

/** The drain loop's options, in milliseconds as its policy names them. */
export function drainOptions(config: ShutdownConfig): DrainOptions {
  return {
    minDrainMs: config.minDrainDuration,
    drainTimeoutMs: config.drainTimeout,
    exitAtConnections: config.exitAtConnections,
    checkIntervalMs: config.checkInterval,
    quietPeriodMs: config.quietPeriod,
    healthCheckFailureDelayMs: config.healthCheckFailureDelay,
    adminTimeoutMs: config.adminTimeout,
    connections: config.connections,
    ignoreIdleConnections: config.ignoreIdleConnections,
  };
}
