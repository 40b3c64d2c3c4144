// The options every command takes (the global log options), and every environment variable the
// commands read, by option: gathered from the option tables of the drain, the manager and `status`.
import { DRAIN_SETTINGS } from '../drain/drain-config.js';
import { MANAGER_SETTINGS } from '../manager/manager-settings.js';
import { ENVIRONMENT } from '../shared/environment.js';
import { LOG_FORMATS, LOG_LEVELS } from '../shared/log.js';
import { envNames, type OptionSpec, type OptionValues } from '../shared/option-spec.js';
import { STATUS_SETTINGS } from '../status/status-config.js';

/** The options before the command, for every command: every command logs. */
export const GLOBAL_OPTIONS = {
  logLevel: { flags: '--log-level <level>', kind: 'choice', choices: LOG_LEVELS, fallback: 'info', env: 'ENVOY_SHUTDOWN_LOG_LEVEL', help: 'log level' },
  logFormat: {
    flags: '--log-format <format>',
    kind: 'choice',
    choices: LOG_FORMATS,
    fallback: 'json',
    env: 'ENVOY_SHUTDOWN_LOG_FORMAT',
    help: 'json: one JSON object per line; text: for people',
  },
} as const satisfies Readonly<Record<string, OptionSpec>>;

export type GlobalOptions = OptionValues<typeof GLOBAL_OPTIONS>;

/** Each option's environment variable. Flags win over these; these win over defaults. */
export const ENV = {
  ...envNames(GLOBAL_OPTIONS),
  ...envNames(DRAIN_SETTINGS),
  ...envNames(MANAGER_SETTINGS),
  statusInterval: STATUS_SETTINGS.interval.env,
  ...ENVIRONMENT,
} as const;
