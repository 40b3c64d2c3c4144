// Envoy Gateway's `envoy-gateway envoy shutdown-manager|shutdown`, as the pods it generates call
// them: the same flags, defaults, port, paths and exit codes, run by our manager and drain.
import { connect } from 'node:net';
import { defaultShutdownOptions, environmentOnly, type ShutdownConfig } from '../drain/drain-config.js';
import { runShutdown } from '../drain/shutdown-command.js';
import type { AdminAddress } from '../envoy/address.js';
import { runManager } from '../manager/manager-command.js';
import type { ManagerConfig } from '../manager/manager-config.js';
import { MANAGER_SETTINGS } from '../manager/manager-settings.js';
import { processEnv } from '../shared/environment.js';
import { ExitCode } from '../shared/errors.js';
import { hookLogMirror } from '../shared/hook-log.js';
import { createLogger } from '../shared/log.js';
import { defaultOf } from '../shared/parsers.js';
import { onTerminationSignal } from '../shared/signals.js';
import { durationFlag, type FlagValues, intFlag } from './go-flags.js';
import { dropinIdlePolicy } from './idle.js';
import type { Peer } from './peer.js';

/** Envoy Gateway's fixed values: neither command has a flag for them. */
const EG = {
  port: 19002,
  readyPath: '/shutdown/ready',
  readyFile: '/tmp/shutdown-ready',
  adminPort: 19000,
  /**
   * Envoy Gateway's own stats (19001) and readiness (19003) listeners, on 0.0.0.0 or `::`, as
   * Envoy names their stats. Matched exactly: Envoy Gateway skips every stat whose name merely
   * contains "19001", "19003", "admin" or "worker", which also hides user listeners.
   */
  infraListeners: ['0.0.0.0_19001', '0.0.0.0_19003', '[__]_19001', '[__]_19003'],
  /**
   * The connection managers of those listeners in the bootstrap Envoy Gateway renders: found in
   * Envoy's configuration whatever their address, so a listener they alone serve is never counted.
   */
  infraConnectionManagers: ['eg-stats-http', 'eg-ready-http'],
} as const;

/** How long the hook gives each loopback address to accept a connection before trying the next. */
const ADMIN_PROBE_MS = 500;

export const envoyGateway: Peer = {
  name: 'envoy-gateway',
  project: 'Envoy Gateway',
  globalFlags: {},
  otherCommands: ['server', 'certgen', 'version', 'completion'],
  usageExit: 1,
  noCommandExit: 0,
  commands: {
    'shutdown-manager': {
      summary: 'hold GET :19002/shutdown/ready until the drain wrote /tmp/shutdown-ready (500 after --ready-timeout)',
      flags: { 'ready-timeout': { kind: 'duration', fallback: '610s' } },
      run: runEgManager,
    },
    shutdown: {
      summary: 'drain Envoy (admin localhost:19000), then write /tmp/shutdown-ready',
      flags: {
        'health-check-failure-delay': { kind: 'duration', fallback: '0s' },
        'drain-timeout': { kind: 'duration', fallback: '60s' },
        'min-drain-duration': { kind: 'duration', fallback: '10s' },
        'exit-at-connections': { kind: 'int', fallback: '0' },
      },
      run: runEgShutdown,
    },
  },
};

export function egManagerConfig(values: FlagValues): ManagerConfig {
  return {
    host: undefined, // every address, IPv4 and IPv6, as Go's ":19002"
    port: EG.port,
    readyTimeoutMs: Math.max(0, durationFlag(values, 'ready-timeout')),
    readyFile: EG.readyFile,
    maxWaiters: defaultOf(MANAGER_SETTINGS.maxWaiters),
    requestTimeoutMs: defaultOf(MANAGER_SETTINGS.requestTimeout),
    // The hook's drain state lives beside the ready file from its first moment, so a hook that
    // never ran is noticed as it is under our own CLI.
    drainStartTimeoutMs: defaultOf(MANAGER_SETTINGS.drainStartTimeout),
    hookToken: undefined,
    drain: undefined,
    endpoints: { readyPath: EG.readyPath, okBody: '', anyMethod: true },
  };
}

/**
 * Envoy Gateway's drain, with its semantics: no bound is refused, whatever the controller renders.
 * Idle connections stop counting after a quiet period (idle.ts), where Envoy Gateway waits for them.
 */
export function egShutdownConfig(values: FlagValues, adminAddress: AdminAddress, env: NodeJS.ProcessEnv): ShutdownConfig {
  const drainTimeout = Math.max(0, durationFlag(values, 'drain-timeout'));
  return {
    ...defaultShutdownOptions(),
    adminAddress,
    drainTimeout,
    minDrainDuration: Math.min(Math.max(0, durationFlag(values, 'min-drain-duration')), drainTimeout),
    exitAtConnections: intFlag(values, 'exit-at-connections'),
    checkInterval: 1_000,
    healthCheckFailureDelay: Math.max(0, durationFlag(values, 'health-check-failure-delay')),
    ...dropinIdlePolicy(env),
    readyFile: EG.readyFile,
    // Live listener gauges: released as the last connection closes, not at the next stats flush.
    connections: 'listeners',
    ignoreListener: [...EG.infraListeners],
    ignoreConnectionManagers: new Set(EG.infraConnectionManagers),
    envoyPrestopWait: 0,
    ...environmentOnly(env),
    startedBy: 'hook',
  };
}

async function runEgManager(values: FlagValues): Promise<number> {
  const log = createLogger({ level: 'info', format: 'json' }).child({ component: 'manager', peer: 'envoy-gateway' });
  const stop = new Promise<NodeJS.Signals>((resolve) => onTerminationSignal(resolve));
  return runManager(egManagerConfig(values), log, stop);
}

async function runEgShutdown(values: FlagValues): Promise<number> {
  const env = processEnv();
  const log = createLogger({ level: 'info', format: 'json', mirrorPath: hookLogMirror(env) }).child({ component: 'shutdown', peer: 'envoy-gateway' });
  const controller = new AbortController();
  onTerminationSignal(() => controller.abort());
  const adminAddress = await egAdminAddress();
  log.info({ adminAddress: adminAddress.host === '::1' ? '[::1]:19000' : '127.0.0.1:19000' }, 'envoy admin address');
  return egExitCode(await runShutdown(egShutdownConfig(values, adminAddress, env), log, controller.signal));
}

/**
 * Envoy Gateway's hook exits 0 when drained, on the drain timeout and when Envoy could not be
 * reached; 1 only when its hook returns an error (the ready file could not be written; Go exits 1
 * on any error, an unexpected one included).
 */
const EG_EXIT_CODES: Readonly<Record<ExitCode, number>> = {
  [ExitCode.Drained]: 0,
  [ExitCode.EnvoyUnreachable]: 0,
  [ExitCode.Usage]: 1,
  [ExitCode.Timeout]: 0,
  [ExitCode.ReadyFileFailed]: 1,
  [ExitCode.Unexpected]: 1,
  [ExitCode.Interrupted]: ExitCode.Interrupted,
};

export function egExitCode(code: ExitCode): number {
  return EG_EXIT_CODES[code];
}

/**
 * `localhost:19000` as Envoy Gateway dials it: kubelet's /etc/hosts gives 127.0.0.1 and ::1, and
 * an IPv6-only gateway binds its admin API to ::1 alone. The first that accepts a connection wins;
 * neither: 127.0.0.1, and the drain reports Envoy unreachable.
 */
async function egAdminAddress(): Promise<AdminAddress & { kind: 'tcp' }> {
  for (const host of ['127.0.0.1', '::1']) {
    if (await accepts(host, EG.adminPort)) return { kind: 'tcp', host, port: EG.adminPort };
  }
  return { kind: 'tcp', host: '127.0.0.1', port: EG.adminPort };
}

function accepts(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port, timeout: ADMIN_PROBE_MS });
    const done = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.once('connect', () => done(true));
    socket.once('timeout', () => done(false));
    socket.once('error', () => done(false));
  });
}
