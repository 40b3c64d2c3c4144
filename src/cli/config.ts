// The command line's own settings (the global log options) and every environment variable the
// commands read, by option: gathered from the option tables of the drain, the manager and `status`.
import { DRAIN_SETTINGS } from '../drain/drain-config.js';
import { MANAGER_SETTINGS } from '../manager/manager-settings.js';
import { STATUS_SETTINGS } from '../status/status-config.js';
import { ENVIRONMENT } from '../shared/environment.js';
import type { LogFormat, LogLevel } from '../shared/log.js';
import { envNames } from '../shared/option-spec.js';

/** The global options' defaults: every command logs. */
export const LOG_DEFAULTS: { readonly logLevel: LogLevel; readonly logFormat: LogFormat } = { logLevel: 'info', logFormat: 'json' };

/** Each option's environment variable. Flags win over these; these win over defaults. */
export const ENV = {
  ...envNames(DRAIN_SETTINGS),
  ...envNames(MANAGER_SETTINGS),
  statusInterval: STATUS_SETTINGS.interval.env,
  ...ENVIRONMENT,
} as const;
