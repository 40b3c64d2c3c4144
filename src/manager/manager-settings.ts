// The manager's settings: the one table of `shutdown-manager`'s options (flag, variable, default,
// parser, help), from which commander's wiring, --help and docs/reference.md's table follow; the
// checks are in manager-config.ts.
import { DRAIN_SETTINGS } from '../drain/drain-config.js';
import { DEFAULT_READY_FILE } from '../handoff/ready-file.js';
import { parseDuration } from '../shared/duration.js';
import type { OptionSpec, OptionValues } from '../shared/option-spec.js';
import { parseBoolean, parseHost, parseListenPort, parseMaxWaiters, parsePositiveDuration, parseReadyFile } from '../shared/parsers.js';

/** Each setting; durations parse to milliseconds. */
export const MANAGER_SETTINGS = {
  /** The port Envoy's preStop httpGet calls; Envoy Gateway's choice, kept so manifests carry over. */
  port: {
    flags: '--port <port>',
    kind: 'value',
    env: 'ENVOY_SHUTDOWN_PORT',
    fallback: '19002',
    parse: parseListenPort,
    help: 'port for /shutdown/ready and /healthz (0: a free port, logged)',
    doc: 'Port for the endpoints below (`0`: any free port, logged).',
  },
  host: {
    flags: '--host <address>',
    kind: 'value',
    env: 'ENVOY_SHUTDOWN_HOST',
    parse: parseHost,
    defaultDoc: 'all interfaces, IPv4 and IPv6',
    help: 'IP address to listen on',
    doc: 'IP address to listen on. kubelet calls the hook on the pod IP, so not loopback.',
  },
  readyTimeout: {
    flags: '--ready-timeout <duration>',
    kind: 'value',
    env: 'ENVOY_SHUTDOWN_READY_TIMEOUT',
    fallback: '70s',
    parse: parsePositiveDuration,
    help: "answer 500 after this long without a ready file; must exceed shutdown's --drain-timeout and stay below terminationGracePeriodSeconds",
    doc: "Answer 500 after this long without a ready file. Must exceed `shutdown`'s `--drain-timeout`: when `ENVOY_SHUTDOWN_DRAIN_TIMEOUT` is set, a shorter value is refused at start.",
  },
  readyFile: {
    flags: '--ready-file <path>',
    kind: 'value',
    env: DRAIN_SETTINGS.readyFile.env,
    fallback: DEFAULT_READY_FILE,
    parse: parseReadyFile,
    help: 'the file shutdown writes when the drain ends',
    doc: 'The file `shutdown` writes.',
  },
  maxWaiters: {
    flags: '--max-waiters <n>',
    kind: 'value',
    env: 'ENVOY_SHUTDOWN_MAX_WAITERS',
    fallback: '1000',
    parse: parseMaxWaiters,
    help: 'concurrent /shutdown/ready requests; more get 503',
    doc: 'Concurrent `/shutdown/ready` requests; more get 503. kubelet sends one per termination.',
  },
  requestTimeout: {
    flags: '--request-timeout <duration>',
    kind: 'value',
    env: 'ENVOY_SHUTDOWN_REQUEST_TIMEOUT',
    fallback: '10s',
    parse: parsePositiveDuration,
    help: 'a client must send its whole request within this (slow clients are cut); the wait for the answer is not bounded by it',
    doc: 'A client must send its whole request within this; the wait for the answer is not bounded by it.',
  },
  drainStartTimeout: {
    flags: '--drain-start-timeout <duration>',
    kind: 'value',
    env: 'ENVOY_SHUTDOWN_DRAIN_START_TIMEOUT',
    fallback: '15s',
    parse: parseDuration,
    help: 'release /shutdown/ready waiters (500) when no drain is running this long after the first arrived: the sidecar hook never ran or died (0: off)',
    doc: 'Release `/shutdown/ready` waiters with 500 when no drain is running this long after the first one arrived (`0s`: off).',
  },
  drainEndpoint: {
    flags: '--drain-endpoint',
    kind: 'switch',
    env: 'ENVOY_SHUTDOWN_DRAIN_ENDPOINT',
    parse: parseBoolean,
    help: 'native-sidecar mode: serve /shutdown/drain, which runs the drain (configured by the ENVOY_SHUTDOWN_* variables) for requests carrying ENVOY_SHUTDOWN_HOOK_TOKEN in the X-Envoy-Shutdown-Token header',
    doc: 'Native-sidecar mode: serve `/shutdown/drain`. Needs the hook token.',
  },
  finalScrapeTimeout: {
    flags: '--final-scrape-timeout <duration>',
    kind: 'value',
    env: 'ENVOY_SHUTDOWN_FINAL_SCRAPE_TIMEOUT',
    fallback: '0s',
    parse: parseDuration,
    help: 'on SIGTERM, keep serving /metrics (only) until every scraper seen within this long has read the final counters, at most this long; the scrape interval plus a few seconds (0: off)',
    doc: 'On SIGTERM, once every held request is answered (Envoy is released by then), keep serving `/metrics`, and only it (other paths: 503), until every scraper that read it within this long has read the final counters, at most this long, so that a drain that ends its pod reaches Prometheus. Set it to the scrape interval plus a few seconds (`0s`: off). See [the final scrape](observe.md#the-final-scrape).',
  },
  terminationGracePeriod: {
    flags: '--termination-grace-period <duration>',
    kind: 'value',
    env: 'ENVOY_SHUTDOWN_TERMINATION_GRACE_PERIOD',
    parse: parsePositiveDuration,
    defaultDoc: 'not known',
    help: "the pod's terminationGracePeriodSeconds: the stay for the final scrape ends a second before kubelet's SIGKILL, counted from Envoy's preStop hook",
    doc: "The pod's `terminationGracePeriodSeconds`: the stay for the final scrape ends a second before kubelet's SIGKILL, counted from Envoy's preStop hook (the manager does not stay when that hook never reached it). Must exceed `--final-scrape-timeout`.",
  },
  events: {
    flags: '--events',
    kind: 'switch',
    env: 'ENVOY_SHUTDOWN_EVENTS',
    parse: parseBoolean,
    help: "create a Kubernetes Event on the pod for each drain, after Envoy's release (in a cluster: the pod's service-account token, ENVOY_SHUTDOWN_POD_NAME/NAMESPACE/UID; one attempt, 2 s at most)",
  },
} as const satisfies Readonly<Record<string, OptionSpec>>;

/** What a parse of `shutdown-manager`'s command line hands its action. */
export type ManagerOptions = OptionValues<typeof MANAGER_SETTINGS>;
