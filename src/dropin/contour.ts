// Contour's `contour envoy shutdown-manager|shutdown`, as its pods call them (`/bin/contour`):
// the same flags, defaults, port, paths and exit code, run by our manager and drain.
import { setTimeout as sleep } from 'node:timers/promises';
import { defaultShutdownOptions, environmentOnly, type ShutdownConfig } from '../drain/drain-config.js';
import { FAST_READ_INTERVAL_MS } from '../drain/schedule.js';
import { runShutdown } from '../drain/shutdown-command.js';
import { parseAdminAddress } from '../envoy/address.js';
import { ADMIN_SCOPE } from '../envoy/stat-names.js';
import { runManager } from '../manager/manager-command.js';
import type { ManagerConfig } from '../manager/manager-config.js';
import { MANAGER_SETTINGS } from '../manager/manager-settings.js';
import { formatDuration } from '../shared/duration.js';
import { processEnv } from '../shared/environment.js';
import { ExitCode, UsageError } from '../shared/errors.js';
import { hookLogMirror } from '../shared/hook-log.js';
import { createLogger, type LogFormat, type Logger } from '../shared/log.js';
import { defaultOf, parseListenPort, parseReadyFile } from '../shared/parsers.js';
import { onTerminationSignal } from '../shared/signals.js';
import { durationFlag, type FlagValues, intFlag, stringFlag } from './go-flags.js';
import { dropinIdlePolicy } from './idle.js';
import type { Peer } from './peer.js';

const CONTOUR = {
  readyPath: '/shutdown',
  /** Connection managers Contour never counts: the admin API and its stats and health listeners. */
  ignoredPrefixes: [ADMIN_SCOPE, 'envoy-admin', 'stats', 'health', 'stats-health'],
  /** The stats and health listener of `contour bootstrap` (0.0.0.0:8002, or [::]:8002), as Envoy names its stats: counted out even when Envoy's configuration cannot be read. */
  statsListeners: ['0.0.0.0_8002', '[__]_8002'],
} as const;

export const contour: Peer = {
  name: 'contour',
  project: 'Contour',
  globalFlags: { 'log-format': { kind: 'string', fallback: 'text' } },
  otherCommands: ['bootstrap', 'certgen', 'cli', 'gateway-provisioner', 'serve', 'version'],
  usageExit: 1,
  noCommandExit: 1,
  commands: {
    'shutdown-manager': {
      summary: 'hold GET :8090/shutdown until the drain wrote /admin/ok (no timeout)',
      flags: {
        'ready-file': { kind: 'string', fallback: '/admin/ok' },
        'serve-port': { kind: 'int', fallback: '8090' },
      },
      run: runContourManager,
    },
    shutdown: {
      summary: 'fail Envoy health checks over /admin/admin.sock, wait for HTTP connections to drain, then write /admin/ok',
      flags: {
        'admin-address': { kind: 'string', fallback: '/admin/admin.sock' },
        'admin-port': { kind: 'int', fallback: '0' },
        'check-delay': { kind: 'duration', fallback: '0s' },
        'check-interval': { kind: 'duration', fallback: '5s' },
        'drain-delay': { kind: 'duration', fallback: '0s' },
        'min-open-connections': { kind: 'int', fallback: '0' },
        'ready-file': { kind: 'string', fallback: '/admin/ok' },
      },
      run: runContourShutdown,
    },
  },
};

export function contourManagerConfig(values: FlagValues): ManagerConfig {
  return {
    host: undefined,
    port: parseListenPort(String(intFlag(values, 'serve-port'))),
    readyTimeoutMs: Number.POSITIVE_INFINITY,
    readyFile: parseReadyFile(stringFlag(values, 'ready-file')),
    maxWaiters: defaultOf(MANAGER_SETTINGS.maxWaiters),
    requestTimeoutMs: defaultOf(MANAGER_SETTINGS.requestTimeout),
    // Off: the hook may sleep --drain-delay before it starts, and the manager cannot see that flag.
    drainStartTimeoutMs: 0,
    hookToken: undefined,
    drain: undefined,
    endpoints: { readyPath: CONTOUR.readyPath, okBody: 'OK', anyMethod: true },
  };
}

/**
 * Contour's drain: no minimum beyond the check delay, no timeout. Unlike Contour, which counts
 * HTTP connection managers only, every listener's connections count, TCP proxy and TLS passthrough
 * ones included, except those of its stats and health listener; idle ones stop counting after a
 * quiet period (idle.ts).
 */
export function contourShutdownConfig(values: FlagValues, env: NodeJS.ProcessEnv): ShutdownConfig {
  const admin = stringFlag(values, 'admin-address');
  if (!admin.startsWith('/')) throw new UsageError(`--admin-address must be the absolute path of Envoy's admin Unix socket, got ${JSON.stringify(admin)}`);
  return {
    ...defaultShutdownOptions(),
    adminAddress: parseAdminAddress(admin),
    drainTimeout: Number.POSITIVE_INFINITY,
    minDrainDuration: Math.max(0, durationFlag(values, 'check-delay')),
    exitAtConnections: intFlag(values, 'min-open-connections'),
    // Contour sleeps this between polls; here it is the slowest cadence (reads come faster near the end).
    checkInterval: Math.max(FAST_READ_INTERVAL_MS, durationFlag(values, 'check-interval')),
    healthCheckFailureDelay: 0,
    ...dropinIdlePolicy(env),
    readyFile: parseReadyFile(stringFlag(values, 'ready-file')),
    connections: 'listeners',
    ignoreListener: [...CONTOUR.statsListeners],
    ignoreConnectionManagers: new Set(CONTOUR.ignoredPrefixes),
    envoyPrestopWait: 0,
    ...environmentOnly(env),
    startedBy: 'hook',
  };
}

function logger(values: FlagValues, component: string, mirrorPath?: string): Logger {
  const format = stringFlag(values, 'log-format');
  if (format !== 'text' && format !== 'json') throw new UsageError(`--log-format must be text or json, got ${JSON.stringify(format)}`);
  return createLogger({ level: 'info', format: format as LogFormat, mirrorPath }).child({ component, peer: 'contour' });
}

async function runContourManager(values: FlagValues): Promise<number> {
  const config = contourManagerConfig(values);
  const log = logger(values, 'manager');
  const stop = new Promise<NodeJS.Signals>((resolve) => onTerminationSignal(resolve));
  return runManager(config, log, stop);
}

async function runContourShutdown(values: FlagValues): Promise<number> {
  const env = processEnv();
  const config = contourShutdownConfig(values, env);
  const log = logger(values, 'shutdown', hookLogMirror(env));
  if (intFlag(values, 'admin-port') !== 0) log.warn('--admin-port is deprecated and ignored, as in Contour: the admin API is reached over --admin-address');
  const controller = new AbortController();
  onTerminationSignal(() => controller.abort());
  const drainDelayMs = Math.max(0, durationFlag(values, 'drain-delay'));
  if (drainDelayMs > 0) {
    log.info({ drainDelay: formatDuration(drainDelayMs) }, 'waiting before failing health checks');
    try {
      await sleep(drainDelayMs, undefined, { signal: controller.signal });
    } catch {
      log.warn('interrupted before the drain started: nothing was sent to Envoy');
      return ExitCode.Interrupted;
    }
  }
  return contourExitCode(await runShutdown(config, log, controller.signal));
}

/** Contour's hook exits 0 whenever it returns, even when the ready file could not be written. */
const CONTOUR_EXIT_CODES: Readonly<Record<ExitCode, number>> = {
  [ExitCode.Drained]: 0,
  [ExitCode.EnvoyUnreachable]: 0,
  [ExitCode.Usage]: 0,
  [ExitCode.Timeout]: 0,
  [ExitCode.ReadyFileFailed]: 0,
  [ExitCode.Unexpected]: 0,
  [ExitCode.Interrupted]: ExitCode.Interrupted,
};

export function contourExitCode(code: ExitCode): number {
  return CONTOUR_EXIT_CODES[code];
}
