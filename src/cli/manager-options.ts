// The one table of `shutdown-manager`'s options, in the form of shutdown's (shutdown-options.ts): a
// flag and help for each of the manager's settings (manager/manager-settings.ts), which commander's
// wiring reads.
import { MANAGER_SETTINGS } from '../manager/manager-settings.js';
import type { OptionSpec, OptionValues } from './option-spec.js';

const S = MANAGER_SETTINGS;

export const MANAGER_OPTIONS = {
  port: { flags: '--port <port>', kind: 'value', ...S.port, help: 'port for /shutdown/ready and /healthz (0: a free port, logged)', doc: 'Port for the endpoints below (`0`: any free port, logged).' },
  host: { flags: '--host <address>', kind: 'value', ...S.host, defaultDoc: 'all interfaces, IPv4 and IPv6', help: 'IP address to listen on', doc: 'IP address to listen on. kubelet calls the hook on the pod IP, so not loopback.' },
  readyTimeout: {
    flags: '--ready-timeout <duration>',
    kind: 'value',
    ...S.readyTimeout,
    help: "answer 500 after this long without a ready file; must exceed shutdown's --drain-timeout and stay below terminationGracePeriodSeconds",
    doc: "Answer 500 after this long without a ready file. Must exceed `shutdown`'s `--drain-timeout`: when `ENVOY_SHUTDOWN_DRAIN_TIMEOUT` is set, a shorter value is refused at start.",
  },
  readyFile: { flags: '--ready-file <path>', kind: 'value', ...S.readyFile, help: 'the file shutdown writes when the drain ends', doc: 'The file `shutdown` writes.' },
  maxWaiters: { flags: '--max-waiters <n>', kind: 'value', ...S.maxWaiters, help: 'concurrent /shutdown/ready requests; more get 503', doc: 'Concurrent `/shutdown/ready` requests; more get 503. kubelet sends one per termination.' },
  requestTimeout: {
    flags: '--request-timeout <duration>',
    kind: 'value',
    ...S.requestTimeout,
    help: 'a client must send its whole request within this (slow clients are cut); the wait for the answer is not bounded by it',
    doc: 'A client must send its whole request within this; the wait for the answer is not bounded by it.',
  },
  drainStartTimeout: {
    flags: '--drain-start-timeout <duration>',
    kind: 'value',
    ...S.drainStartTimeout,
    help: 'release /shutdown/ready waiters (500) when no drain is running this long after the first arrived: the sidecar hook never ran or died (0: off)',
    doc: 'Release `/shutdown/ready` waiters with 500 when no drain is running this long after the first one arrived (`0s`: off).',
  },
  drainEndpoint: {
    flags: '--drain-endpoint',
    kind: 'switch',
    ...S.drainEndpoint,
    help: 'native-sidecar mode: serve /shutdown/drain, which runs the drain (configured by the ENVOY_SHUTDOWN_* variables) for requests carrying ENVOY_SHUTDOWN_HOOK_TOKEN in the X-Envoy-Shutdown-Token header',
    doc: 'Native-sidecar mode: serve `/shutdown/drain`. Needs the hook token.',
  },
  events: {
    flags: '--events',
    kind: 'switch',
    ...S.events,
    help: "create a Kubernetes Event on the pod for each drain, after Envoy's release (in a cluster: the pod's service-account token, ENVOY_SHUTDOWN_POD_NAME/NAMESPACE/UID; one attempt, 2 s at most)",
  },
} as const satisfies Readonly<Record<string, OptionSpec>>;

/** What a parse of `shutdown-manager`'s command line hands its action. */
export type ManagerValues = OptionValues<typeof MANAGER_OPTIONS>;
