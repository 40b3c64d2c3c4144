// The protocol tests' Envoy: every protocol a peer's generated configuration serves, on listeners
// named unlike their connection managers (as generated and hand-written configurations are), so
// nothing can pair a listener with its connection manager by name:
//
// | listener     | its stats (`listener.<x>.*`)          | filter chain(s)                                    | connection manager / tcp_proxy        |
// |--------------|---------------------------------------|----------------------------------------------------|---------------------------------------|
// | `listener_0` | `127.0.0.1_0` (no stat_prefix: the address as configured, port 0) | HTTP/1.1, h2c, WebSocket upgrade, gRPC | HCM `ingress_http` |
// | `tcp`        | `tcp_in`                              | tcp_proxy to the echo server                       | `tcp_echo`                            |
// | `tls`        | `tls_in`                              | tls_inspector; SNI `passthrough.test` → tcp_proxy; SNI `terminated.test` → TLS + HCM | `tls_passthrough`, HCM `ingress_https` |
// | `quic`       | `quic_in`                             | UDP, QUIC transport, HTTP/3                        | HCM `ingress_h3`                      |
import type { Bootstrap, Cluster, Filter } from '../chart/bootstrap.js';
import type { Backends } from './backends.js';
import type { Certificate } from './certs.js';

const HCM = 'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager';
const ROUTER = 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router';
const TCP_PROXY = 'type.googleapis.com/envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy';
const TLS_INSPECTOR = 'type.googleapis.com/envoy.extensions.filters.listener.tls_inspector.v3.TlsInspector';
const DOWNSTREAM_TLS = 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext';
const QUIC_DOWNSTREAM = 'type.googleapis.com/envoy.extensions.transport_sockets.quic.v3.QuicDownstreamTransport';
const HTTP_OPTIONS = 'type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions';

/** The SNI names the `tls` listener tells apart, and the name the QUIC listener's certificate carries. */
export const SNI = { passthrough: 'passthrough.test', terminated: 'terminated.test', quic: 'h3.test' } as const;

/** How long the connection managers give a draining connection (Envoy's default is 5 s): short, so the tests see its end. */
const HCM_DRAIN_TIMEOUT_S = 1;

export interface ProtocolCertificates {
  readonly passthrough: Certificate;
  readonly terminated: Certificate;
  readonly quic: Certificate;
}

function tlsCertificate(certificate: Certificate): Record<string, unknown> {
  return { certificate_chain: { filename: certificate.certPath }, private_key: { filename: certificate.keyPath } };
}

function connectionManager(statPrefix: string, extra: Record<string, unknown> = {}): Filter {
  return {
    name: 'envoy.filters.network.http_connection_manager',
    typed_config: {
      '@type': HCM,
      stat_prefix: statPrefix,
      codec_type: 'AUTO',
      drain_timeout: `${HCM_DRAIN_TIMEOUT_S}s`,
      upgrade_configs: [{ upgrade_type: 'websocket' }],
      route_config: {
        virtual_hosts: [
          {
            name: 'all',
            domains: ['*'],
            routes: [
              // gRPC calls go to the h2c server; the rest (and every long request) to the HTTP/1.1 one, with no route timeout.
              { match: { prefix: '/', grpc: {} }, route: { cluster: 'grpc_backend', timeout: '0s' } },
              { match: { prefix: '/' }, route: { cluster: 'http_backend', timeout: '0s' } },
            ],
          },
        ],
      },
      http_filters: [{ name: 'envoy.filters.http.router', typed_config: { '@type': ROUTER } }],
      ...extra,
    },
  };
}

function tcpProxy(statPrefix: string, cluster: string): Filter {
  return { name: 'envoy.filters.network.tcp_proxy', typed_config: { '@type': TCP_PROXY, stat_prefix: statPrefix, cluster } };
}

function cluster(name: string, port: number, http2 = false): Cluster {
  const upstream = {
    name,
    type: 'STATIC',
    connect_timeout: '2s',
    load_assignment: {
      cluster_name: name,
      endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: port } } } }] }],
    },
    ...(http2
      ? {
          typed_extension_protocol_options: {
            'envoy.extensions.upstreams.http.v3.HttpProtocolOptions': { '@type': HTTP_OPTIONS, explicit_http_config: { http2_protocol_options: {} } },
          },
        }
      : {}),
  };
  return upstream;
}

const loopback = { socket_address: { address: '127.0.0.1', port_value: 0 } };

export function protocolsBootstrap(backends: Backends, certificates: ProtocolCertificates): Bootstrap {
  const bootstrap = {
    admin: { address: loopback },
    static_resources: {
      listeners: [
        { name: 'listener_0', address: loopback, filter_chains: [{ filters: [connectionManager('ingress_http')] }] },
        { name: 'tcp', stat_prefix: 'tcp_in', address: loopback, filter_chains: [{ filters: [tcpProxy('tcp_echo', 'tcp_backend')] }] },
        {
          name: 'tls',
          stat_prefix: 'tls_in',
          address: loopback,
          listener_filters: [{ name: 'envoy.filters.listener.tls_inspector', typed_config: { '@type': TLS_INSPECTOR } }],
          filter_chains: [
            { filter_chain_match: { server_names: [SNI.passthrough] }, filters: [tcpProxy('tls_passthrough', 'tls_backend')] },
            {
              filter_chain_match: { server_names: [SNI.terminated] },
              transport_socket: {
                name: 'envoy.transport_sockets.tls',
                typed_config: {
                  '@type': DOWNSTREAM_TLS,
                  common_tls_context: { tls_certificates: [tlsCertificate(certificates.terminated)], alpn_protocols: ['h2', 'http/1.1'] },
                },
              },
              filters: [connectionManager('ingress_https')],
            },
          ],
        },
        {
          name: 'quic',
          stat_prefix: 'quic_in',
          address: { socket_address: { protocol: 'UDP', address: '127.0.0.1', port_value: 0 } },
          udp_listener_config: { quic_options: {} },
          filter_chains: [
            {
              transport_socket: {
                name: 'envoy.transport_sockets.quic',
                typed_config: {
                  '@type': QUIC_DOWNSTREAM,
                  downstream_tls_context: { common_tls_context: { tls_certificates: [tlsCertificate(certificates.quic)] } },
                },
              },
              filters: [connectionManager('ingress_h3', { codec_type: 'HTTP3', upgrade_configs: [], http3_protocol_options: {} })],
            },
          ],
        },
      ],
      clusters: [
        cluster('http_backend', backends.port),
        cluster('grpc_backend', backends.port, true),
        cluster('tcp_backend', backends.port),
        cluster('tls_backend', backends.port),
      ],
    },
  };
  // The chart's Bootstrap type names only what the chart's tests read; this one has more fields.
  return bootstrap as Bootstrap;
}
