// The values the chart tests render and lint: each case is one way people install the chart.
import type { RenderOptions } from './helm.js';

export interface ChartCase extends RenderOptions {
  readonly name: string;
  /** The timeout chain the case must render, in seconds. */
  readonly timeouts: { readonly drain: number; readonly ready: number; readonly grace: number };
  /** The manager must be a native sidecar (nativeSidecar: true). */
  readonly native?: boolean;
  /** The pod must be in the node's network namespace (hostNetwork: true). */
  readonly hostNetwork?: boolean;
  /** The hook token the case sets; none: the chart generates one. */
  readonly hookToken?: string;
}

/** A token as a user could set it in hookToken.value: visible ASCII, with what YAML and Go quoting must survive. */
export const USER_HOOK_TOKEN = `user-chosen:"token"#with\\back'slash~!42`;

/** A backend behind an HTTP listener, and a TCP listener: what a user's values typically add. */
const USER_LISTENERS = [
  {
    name: 'public',
    address: { socket_address: { address: '0.0.0.0', port_value: 8443 } },
    filter_chains: [
      {
        filters: [
          {
            name: 'envoy.filters.network.http_connection_manager',
            typed_config: {
              '@type': 'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager',
              stat_prefix: 'public_http',
              route_config: {
                virtual_hosts: [{ name: 'all', domains: ['*'], routes: [{ match: { prefix: '/' }, route: { cluster: 'backend' } }] }],
              },
              http_filters: [
                { name: 'envoy.filters.http.router', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router' } },
              ],
            },
          },
        ],
      },
    ],
  },
  {
    name: 'postgres',
    stat_prefix: 'db',
    address: { socket_address: { address: '0.0.0.0', port_value: 5432 } },
    filter_chains: [
      {
        filters: [
          {
            name: 'envoy.filters.network.tcp_proxy',
            typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy', stat_prefix: 'db', cluster: 'database' },
          },
        ],
      },
    ],
  },
] as const;

const USER_CLUSTERS = [
  {
    name: 'backend',
    type: 'STRICT_DNS',
    connect_timeout: '1s',
    load_assignment: {
      cluster_name: 'backend',
      endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: 'web.apps.svc', port_value: 8080 } } } }] }],
    },
  },
  {
    name: 'database',
    type: 'STRICT_DNS',
    connect_timeout: '1s',
    load_assignment: {
      cluster_name: 'database',
      endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: 'pg.db.svc', port_value: 5432 } } } }] }],
    },
  },
] as const;

const DEFAULT_TIMEOUTS = { drain: 60, ready: 70, grace: 90 };

export const CASES: readonly ChartCase[] = [
  { name: 'defaults', timeouts: DEFAULT_TIMEOUTS },
  { name: 'Unix-socket admin', set: ['admin.unixSocket.enabled=true'], timeouts: DEFAULT_TIMEOUTS },
  { name: 'IPv6 loopback admin', set: ['admin.address=::1'], timeouts: DEFAULT_TIMEOUTS },
  { name: 'custom drain timeout', set: ['shutdown.drainTimeout=300'], timeouts: { drain: 300, ready: 310, grace: 330 } },
  {
    name: 'explicit ready timeout and grace period, fractional durations',
    values: {
      shutdown: {
        drainTimeout: 30,
        readyTimeout: 45,
        terminationGracePeriodSeconds: 120,
        minDrainDuration: 2.5,
        checkInterval: 0.25,
        healthCheckFailureDelay: 5,
      },
    },
    timeouts: { drain: 30, ready: 45, grace: 120 },
  },
  {
    name: 'user listeners and clusters',
    values: {
      listeners: USER_LISTENERS,
      clusters: USER_CLUSTERS,
      envoy: {
        ports: [
          { name: 'https', containerPort: 8443 },
          { name: 'postgres', containerPort: 5432 },
        ],
      },
      service: {
        ports: [
          { name: 'https', port: 443, targetPort: 'https' },
          { name: 'postgres', port: 5432, targetPort: 'postgres' },
        ],
      },
      shutdown: { ignoreListeners: ['db'] },
    },
    timeouts: DEFAULT_TIMEOUTS,
  },
  {
    name: 'PodDisruptionBudget and HorizontalPodAutoscaler',
    values: {
      podDisruptionBudget: { enabled: true, minAvailable: null, maxUnavailable: '25%' },
      autoscaling: {
        enabled: true,
        minReplicas: 3,
        maxReplicas: 12,
        targetMemoryUtilizationPercentage: 75,
        behavior: { scaleDown: { stabilizationWindowSeconds: 300 } },
      },
    },
    timeouts: DEFAULT_TIMEOUTS,
  },
  {
    name: 'custom sidecar resources and securityContext',
    values: {
      shutdownManager: {
        resources: { requests: { cpu: '50m', memory: '96Mi' }, limits: { cpu: '500m', memory: '256Mi' } },
        securityContext: {
          allowPrivilegeEscalation: false,
          readOnlyRootFilesystem: true,
          runAsNonRoot: true,
          runAsUser: 10001,
          runAsGroup: 10001,
          capabilities: { drop: ['ALL'] },
          seccompProfile: { type: 'Localhost', localhostProfile: 'profiles/shutdown-manager.json' },
        },
      },
    },
    timeouts: DEFAULT_TIMEOUTS,
  },
  { name: 'user-provided hook token', values: { hookToken: { value: USER_HOOK_TOKEN } }, hookToken: USER_HOOK_TOKEN, timeouts: DEFAULT_TIMEOUTS },
  { name: 'native sidecar', set: ['nativeSidecar=true'], kubeVersion: '1.29.0', native: true, timeouts: DEFAULT_TIMEOUTS },
  {
    name: 'native sidecar, explicit grace period, quiet period off',
    values: { nativeSidecar: true, shutdown: { drainTimeout: 120, terminationGracePeriodSeconds: 150, quietPeriod: 0, minDrainDuration: 30 } },
    kubeVersion: '1.33.0',
    native: true,
    // The ready timeout is drain + 10 in native mode: nothing waits on /shutdown/ready, but the manager needs it above the drain timeout.
    timeouts: { drain: 120, ready: 130, grace: 150 },
  },
  { name: 'hostNetwork', set: ['hostNetwork=true'], hostNetwork: true, timeouts: DEFAULT_TIMEOUTS },
  {
    name: 'hostNetwork with a native sidecar, an IPv6 admin address asked for, and custom ports',
    values: {
      hostNetwork: true,
      nativeSidecar: true,
      admin: { address: '::1' },
      statsListener: { port: 29001 },
      readinessListener: { port: 29003 },
      shutdownManager: { port: 29002 },
      listeners: [USER_LISTENERS[0]],
      envoy: { ports: [{ name: 'https', containerPort: 8443 }] },
      service: { ports: [{ name: 'https', port: 443, targetPort: 'https' }] },
    },
    kubeVersion: '1.29.0',
    native: true,
    hostNetwork: true,
    timeouts: DEFAULT_TIMEOUTS,
  },
];

/** A sidecar-less install: no container beside Envoy, whose own exec hook drains. */
export interface SidecarlessCase extends RenderOptions {
  readonly name: string;
  /** The executable comes from the image itself, mounted as an `image` volume (no init container). */
  readonly imageVolume?: boolean;
  /** The drain timeout and grace period the case must render, in seconds (no ready timeout here). */
  readonly timeouts: { readonly drain: number; readonly grace: number };
  /** The emptyDir's size limit the case must render (source copy). */
  readonly sizeLimit?: string;
}

export const SIDECARLESS_CASES: readonly SidecarlessCase[] = [
  { name: 'sidecar-less, copied into an emptyDir', set: ['mode=sidecarless'], timeouts: { drain: 60, grace: 90 }, sizeLimit: '256Mi' },
  {
    name: 'sidecar-less from an image volume',
    values: { mode: 'sidecarless', sidecarless: { source: 'imageVolume' } },
    kubeVersion: '1.33.0',
    imageVolume: true,
    timeouts: { drain: 60, grace: 90 },
  },
  {
    name: 'sidecar-less under hostNetwork, with user listeners, extra env, text logs, its own grace period, and sidecar-only values that would clash in sidecar mode',
    values: {
      mode: 'sidecarless',
      hostNetwork: true,
      sidecarless: { sizeLimit: '1Gi' },
      shutdown: { drainTimeout: 30, terminationGracePeriodSeconds: 45, minDrainDuration: 2.5, quietPeriod: 0, checkInterval: 0.5, readyTimeout: 20 },
      shutdownManager: { logFormat: 'text', logLevel: 'debug', port: 8443 },
      listeners: [USER_LISTENERS[0]],
      envoy: { ports: [{ name: 'https', containerPort: 8443 }], extraEnv: [{ name: 'TZ', value: 'UTC' }] },
      service: { ports: [{ name: 'https', port: 443, targetPort: 'https' }] },
    },
    timeouts: { drain: 30, grace: 45 },
    sizeLimit: '1Gi',
  },
];
