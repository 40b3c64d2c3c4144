// The manager's configuration from its settings (manager-settings.ts), checked against the
// drain's where both are known.
import { DRAIN_SETTINGS, type ShutdownConfig, shutdownConfigFromEnv } from '../drain/drain-config.js';
import { type EventsSetup, eventsSetup } from '../events/in-cluster.js';
import { formatDuration, parseDuration } from '../shared/duration.js';
import { ENVIRONMENT } from '../shared/environment.js';
import { UsageError } from '../shared/errors.js';
import { fromEnv } from '../shared/parsers.js';
import type { FinalScrapeSettings } from './final-scrape.js';
import { parseHookToken } from './hook-token.js';
import type { ManagerOptions } from './manager-settings.js';
import type { Endpoints } from './server.js';

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
  /** Undefined: our own paths and bodies. */
  readonly endpoints?: Endpoints;
  /** An Event on the pod per drain (--events), or why none is sent. Undefined: not enabled. */
  readonly events?: EventsSetup;
  /** Stay on SIGTERM for the scrape that reads the final counters. Undefined: off. */
  readonly finalScrape?: FinalScrapeSettings;
}

/**
 * `env` is the container's environment: when it also sets the drain timeout (the chart passes
 * the same variables to both commands), a ready timeout that would cut the drain short is refused
 * at start-up, not discovered when the pod terminates.
 */
export function managerConfig(options: ManagerOptions, env: NodeJS.ProcessEnv): ManagerConfig {
  const drainTimeoutEnv = DRAIN_SETTINGS.drainTimeout.env;
  const drainTimeoutText = env[drainTimeoutEnv];
  if (drainTimeoutText !== undefined) {
    const drainTimeoutMs = fromEnv(drainTimeoutEnv, drainTimeoutText, parseDuration);
    if (options.readyTimeout <= drainTimeoutMs) {
      throw new UsageError(
        `--ready-timeout (${formatDuration(options.readyTimeout)}) must be longer than the drain timeout ${drainTimeoutEnv}=${drainTimeoutText}`,
      );
    }
  }
  const tokenText = env[ENVIRONMENT.hookToken];
  // Set but empty is a mistake (a missing Secret key?), not "no token": refused like a short one.
  const hookToken = tokenText === undefined ? undefined : fromEnv(ENVIRONMENT.hookToken, tokenText, parseHookToken);
  if (options.drainEndpoint && hookToken === undefined) {
    throw new UsageError(`--drain-endpoint needs ${ENVIRONMENT.hookToken}: without it anyone who can reach the pod could start a drain`);
  }
  const gracePeriodMs = options.terminationGracePeriod;
  if (gracePeriodMs !== undefined && options.finalScrapeTimeout >= gracePeriodMs) {
    throw new UsageError(
      `--final-scrape-timeout (${formatDuration(options.finalScrapeTimeout)}) must be shorter than --termination-grace-period (${formatDuration(gracePeriodMs)}): kubelet kills the pod then`,
    );
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
    drain: options.drainEndpoint ? shutdownConfigFromEnv(env, options.readyFile) : undefined,
    ...(options.events ? { events: eventsSetup(env) } : {}),
    ...(options.finalScrapeTimeout > 0 ? { finalScrape: { timeoutMs: options.finalScrapeTimeout, gracePeriodMs } } : {}),
  };
}
