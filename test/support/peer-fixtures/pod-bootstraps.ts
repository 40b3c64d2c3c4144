// Envoy bootstraps shaped like the pods Envoy Gateway and Contour generate, on their fixed ports
// and paths (only ever run inside a private network and mount namespace, see ../sandbox.ts). The
// admin API sits one step behind a recording tap that holds the address the peer's hook dials.

const HCM = 'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager';
const ROUTER = { name: 'envoy.filters.http.router', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router' } };

/** Where the real admin API listens; the tap listens where the peer expects it. */
export const EG_REAL_ADMIN_PORT = 19100;
export const CONTOUR_REAL_ADMIN_SOCKET = '/admin/envoy-admin.sock';

function socket(address: string, port: number): object {
  return { socket_address: { address, port_value: port } };
}

function httpListener(name: string, address: string, port: number, prefix: string, extra: { statPrefix?: string; healthCheck?: string } = {}): object {
  const filters = [
    ...(extra.healthCheck === undefined
      ? []
      : [
          {
            name: 'envoy.filters.http.health_check',
            typed_config: {
              '@type': 'type.googleapis.com/envoy.extensions.filters.http.health_check.v3.HealthCheck',
              pass_through_mode: false,
              headers: [{ name: ':path', string_match: { exact: extra.healthCheck } }],
            },
          },
        ]),
    ROUTER,
  ];
  return {
    name,
    ...(extra.statPrefix === undefined ? {} : { stat_prefix: extra.statPrefix }),
    address: socket(address, port),
    filter_chains: [
      {
        filters: [
          {
            name: 'envoy.filters.network.http_connection_manager',
            typed_config: {
              '@type': HCM,
              stat_prefix: prefix,
              http_filters: filters,
              route_config: {
                virtual_hosts: [
                  { name: 'all', domains: ['*'], routes: [{ match: { prefix: '/' }, direct_response: { status: 200, body: { inline_string: 'hello\n' } } }] },
                ],
              },
            },
          },
        ],
      },
    ],
  };
}

/**
 * Envoy Gateway's proxy: admin on 127.0.0.1 (or ::1 for an IPv6 gateway), its stats listener on
 * 19001 and readiness listener (health check filter) on 19003, a user listener on 10080, and a
 * user listener whose stats are named with "19001" in them, which Envoy Gateway's own hook skips.
 */
export function egBootstrap(adminHost: '127.0.0.1' | '::1', adminPort = EG_REAL_ADMIN_PORT): object {
  return {
    admin: { address: socket(adminHost, adminPort) },
    static_resources: {
      listeners: [
        httpListener('envoy-gateway-proxy-stats-0.0.0.0-19001', '0.0.0.0', 19001, 'eg-stats-http'),
        httpListener('envoy-gateway-proxy-ready-0.0.0.0-19003', '0.0.0.0', 19003, 'eg-ready-http', { healthCheck: '/ready' }),
        httpListener('default/eg/http', '0.0.0.0', 10080, 'http-10080'),
        httpListener('default/eg/tenant', '0.0.0.0', 10081, 'http-10081', { statPrefix: 'tenant-19001' }),
      ],
    },
  };
}

/**
 * Contour's Envoy: admin on a Unix socket in the shared /admin volume, the stats/health listener
 * on 8002 (connection manager prefix `stats`), `ingress_http` on 8080, and a TCP proxy listener
 * (TLS passthrough) on 8443 whose connections Contour's hook never counts (it forwards to the
 * stats listener, whose connection manager is not counted either).
 */
export function contourBootstrap(adminSocket = CONTOUR_REAL_ADMIN_SOCKET): object {
  return {
    admin: { address: { pipe: { path: adminSocket } } },
    static_resources: {
      listeners: [
        httpListener('stats-health', '0.0.0.0', 8002, 'stats', { healthCheck: '/ready' }),
        httpListener('ingress_http', '0.0.0.0', 8080, 'ingress_http'),
        {
          name: 'ingress_passthrough',
          address: socket('0.0.0.0', 8443),
          filter_chains: [
            {
              filters: [
                {
                  name: 'envoy.filters.network.tcp_proxy',
                  typed_config: {
                    '@type': 'type.googleapis.com/envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy',
                    stat_prefix: 'passthrough',
                    cluster: 'backend',
                  },
                },
              ],
            },
          ],
        },
      ],
      clusters: [
        {
          name: 'backend',
          type: 'STATIC',
          connect_timeout: '1s',
          load_assignment: { cluster_name: 'backend', endpoints: [{ lb_endpoints: [{ endpoint: { address: socket('127.0.0.1', 8002) } }] }] },
        },
      ],
    },
  };
}
