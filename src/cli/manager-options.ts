// The one table of `shutdown-manager`'s options, in the form of shutdown's (shutdown-options.ts):
// commander's wiring and the quick parse of a sidecar's command line both read it.
import { DEFAULTS, ENV } from './config.js';
import type { ShutdownOptionSpec } from './shutdown-options.js';
import { parseBoolean, parseHost, parseListenPort, parseMaxWaiters, parsePositiveDuration, parseReadyFile } from '../shared/parsers.js';
import { parseDuration } from '../shared/duration.js';

export const MANAGER_OPTIONS: readonly ShutdownOptionSpec[] = [
  { flags: '--port <port>', kind: 'value', env: ENV.port, fallback: String(DEFAULTS.port), parse: parseListenPort, help: 'port for /shutdown/ready and /healthz (0: a free port, logged)', doc: 'Port for the endpoints below (`0`: any free port, logged).' },
  { flags: '--host <address>', kind: 'value', env: ENV.host, defaultDoc: 'all interfaces, IPv4 and IPv6', parse: parseHost, help: 'IP address to listen on', doc: 'IP address to listen on. kubelet calls the hook on the pod IP, so not loopback.' },
  {
    flags: '--ready-timeout <duration>',
    kind: 'value',
    env: ENV.readyTimeout,
    fallback: DEFAULTS.readyTimeout,
    parse: parsePositiveDuration,
    help: "answer 500 after this long without a ready file; must exceed shutdown's --drain-timeout and stay below terminationGracePeriodSeconds",
    doc: "Answer 500 after this long without a ready file. Must exceed `shutdown`'s `--drain-timeout`: when `ENVOY_SHUTDOWN_DRAIN_TIMEOUT` is set, a shorter value is refused at start.",
  },
  { flags: '--ready-file <path>', kind: 'value', env: ENV.readyFile, fallback: DEFAULTS.readyFile, parse: parseReadyFile, help: 'the file shutdown writes when the drain ends', doc: 'The file `shutdown` writes.' },
  { flags: '--max-waiters <n>', kind: 'value', env: ENV.maxWaiters, fallback: String(DEFAULTS.maxWaiters), parse: parseMaxWaiters, help: 'concurrent /shutdown/ready requests; more get 503', doc: 'Concurrent `/shutdown/ready` requests; more get 503. kubelet sends one per termination.' },
  {
    flags: '--request-timeout <duration>',
    kind: 'value',
    env: ENV.requestTimeout,
    fallback: DEFAULTS.requestTimeout,
    parse: parsePositiveDuration,
    help: 'a client must send its whole request within this (slow clients are cut); the wait for the answer is not bounded by it',
    doc: 'A client must send its whole request within this; the wait for the answer is not bounded by it.',
  },
  {
    flags: '--drain-start-timeout <duration>',
    kind: 'value',
    env: ENV.drainStartTimeout,
    fallback: DEFAULTS.drainStartTimeout,
    parse: parseDuration,
    help: 'release /shutdown/ready waiters (500) when no drain is running this long after the first arrived: the sidecar hook never ran or died (0: off)',
    doc: 'Release `/shutdown/ready` waiters with 500 when no drain is running this long after the first one arrived (`0s`: off).',
  },
  {
    flags: '--drain-endpoint',
    kind: 'switch',
    env: ENV.drainEndpoint,
    parse: parseBoolean,
    help: 'native-sidecar mode: serve /shutdown/drain, which runs the drain (configured by the ENVOY_SHUTDOWN_* variables) for requests carrying ENVOY_SHUTDOWN_HOOK_TOKEN in the X-Envoy-Shutdown-Token header',
    doc: 'Native-sidecar mode: serve `/shutdown/drain`. Needs the hook token.',
  },
  {
    flags: '--events',
    kind: 'switch',
    env: ENV.events,
    parse: parseBoolean,
    help: "create a Kubernetes Event on the pod for each drain, after Envoy's release (in a cluster: the pod's service-account token, ENVOY_SHUTDOWN_POD_NAME/NAMESPACE/UID; one attempt, 2 s at most)",
  },
];
