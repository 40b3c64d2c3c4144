// The environment: the variables the tool reads besides its options' (those are named in the
// option tables), each named once, and the one place the process's own environment is taken from.
// Everything below the command entries gets the environment as an argument.

export const ENVIRONMENT = {
  /** Set by kubelet in every container: we run in a cluster. */
  kubernetesServiceHost: 'KUBERNETES_SERVICE_HOST',
  kubernetesServicePort: 'KUBERNETES_SERVICE_PORT',
  /** Where a preStop hook copies its log lines (kubelet discards a hook's own output). */
  hookLogPath: 'ENVOY_SHUTDOWN_HOOK_LOG_PATH',
  /** The token the pod's own hook sends (from a Secret): set only in the environment, never on a command line. */
  hookToken: 'ENVOY_SHUTDOWN_HOOK_TOKEN',
  /** Where the kernel's socket counts are read from instead of /proc/net (the tests point it at a directory without them). */
  socketCountsDir: 'ENVOY_SHUTDOWN_SOCKET_COUNTS_DIR',
  /** Another service-account directory for Events (tests; a token mounted elsewhere). */
  serviceAccountDir: 'ENVOY_SHUTDOWN_SERVICE_ACCOUNT_DIR',
  /** The pod an Event is about, from the downward API. */
  podName: 'ENVOY_SHUTDOWN_POD_NAME',
  podNamespace: 'ENVOY_SHUTDOWN_POD_NAMESPACE',
  podUid: 'ENVOY_SHUTDOWN_POD_UID',
  /** Optional: the Event's source host. */
  nodeName: 'ENVOY_SHUTDOWN_NODE_NAME',
} as const;

/** The process's environment, for the command entries to hand down. */
export function processEnv(): NodeJS.ProcessEnv {
  return process.env;
}
