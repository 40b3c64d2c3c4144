// The command line's own settings (the global log options) and every environment variable the
// commands read, gathered from the settings tables of the drain, the manager and `status`.
import { DRAIN_SETTINGS } from '../drain/drain-config.js';
import { HOOK_TOKEN_ENV, MANAGER_SETTINGS } from '../manager/manager-settings.js';
import { STATUS_SETTINGS } from '../status/status-config.js';
import { HOOK_LOG_PATH_ENV } from '../shared/hook-log.js';
import type { LogFormat, LogLevel } from '../shared/log.js';

/** The global options' defaults: every command logs. */
export const LOG_DEFAULTS: { readonly logLevel: LogLevel; readonly logFormat: LogFormat } = { logLevel: 'info', logFormat: 'json' };

const D = DRAIN_SETTINGS;
const M = MANAGER_SETTINGS;

/** Each option's environment variable. Flags win over these; these win over defaults. */
export const ENV = {
  adminAddress: D.adminAddress.env,
  drainTimeout: D.drainTimeout.env,
  minDrainDuration: D.minDrainDuration.env,
  exitAtConnections: D.exitAtConnections.env,
  checkInterval: D.checkInterval.env,
  healthCheckFailureDelay: D.healthCheckFailureDelay.env,
  quietPeriod: D.quietPeriod.env,
  ignoreIdleConnections: D.ignoreIdleConnections.env,
  readyFile: D.readyFile.env,
  connections: D.connections.env,
  ignoreListeners: D.ignoreListener.env,
  adminTimeout: D.adminTimeout.env,
  requireEnvoyPrestop: D.requireEnvoyPrestop.env,
  envoyPrestopWait: D.envoyPrestopWait.env,
  drainStartTimeout: M.drainStartTimeout.env,
  hookToken: HOOK_TOKEN_ENV,
  drainEndpoint: M.drainEndpoint.env,
  events: M.events.env,
  port: M.port.env,
  host: M.host.env,
  readyTimeout: M.readyTimeout.env,
  maxWaiters: M.maxWaiters.env,
  requestTimeout: M.requestTimeout.env,
  statusInterval: STATUS_SETTINGS.interval.env,
  logLevel: 'ENVOY_SHUTDOWN_LOG_LEVEL',
  logFormat: 'ENVOY_SHUTDOWN_LOG_FORMAT',
  hookLogPath: HOOK_LOG_PATH_ENV,
} as const;
