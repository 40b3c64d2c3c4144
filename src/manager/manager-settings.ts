// The manager's settings: each one's environment variable, default and parser. The command line
// (cli/manager-options.ts) adds a flag and help to each; kept apart from the checks
// (manager-config.ts) so that a command line is read without loading them.
import { DRAIN_SETTINGS } from '../drain/drain-config.js';
import { DEFAULT_READY_FILE } from '../handoff/ready-file.js';
import { parseDuration } from '../shared/duration.js';
import { parseBoolean, parseHost, parseListenPort, parseMaxWaiters, parsePositiveDuration, parseReadyFile } from '../shared/parsers.js';

/** Each setting with its variable, its default as a user would write it (none: off or unset) and its parser. */
export const MANAGER_SETTINGS = {
  /** The port Envoy's preStop httpGet calls; Envoy Gateway's choice, kept so manifests carry over. */
  port: { env: 'ENVOY_SHUTDOWN_PORT', fallback: '19002', parse: parseListenPort },
  host: { env: 'ENVOY_SHUTDOWN_HOST', parse: parseHost },
  readyTimeout: { env: 'ENVOY_SHUTDOWN_READY_TIMEOUT', fallback: '70s', parse: parsePositiveDuration },
  readyFile: { env: DRAIN_SETTINGS.readyFile.env, fallback: DEFAULT_READY_FILE, parse: parseReadyFile },
  maxWaiters: { env: 'ENVOY_SHUTDOWN_MAX_WAITERS', fallback: '1000', parse: parseMaxWaiters },
  requestTimeout: { env: 'ENVOY_SHUTDOWN_REQUEST_TIMEOUT', fallback: '10s', parse: parsePositiveDuration },
  drainStartTimeout: { env: 'ENVOY_SHUTDOWN_DRAIN_START_TIMEOUT', fallback: '15s', parse: parseDuration },
  drainEndpoint: { env: 'ENVOY_SHUTDOWN_DRAIN_ENDPOINT', parse: parseBoolean },
  events: { env: 'ENVOY_SHUTDOWN_EVENTS', parse: parseBoolean },
} as const;

/** The token the pod's own hook sends (from a Secret): set only in the environment, never on a command line. */
export const HOOK_TOKEN_ENV = 'ENVOY_SHUTDOWN_HOOK_TOKEN';
