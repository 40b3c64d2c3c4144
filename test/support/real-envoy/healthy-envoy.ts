// The other pod behind the load balancer: a real Envoy that answers every request on `ingress`
// (HTTP/1.1 or h2c) with 200 itself, so clients moved off the terminating pod have somewhere to go.
import type { Bootstrap } from '../chart/bootstrap.js';
import { startRealEnvoy } from './process.js';

const HCM = 'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager';
const ROUTER = 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router';

/** One HTTP listener, `ingress`, that answers every request with 200 itself; admin on a free loopback port. */
export const HEALTHY_BOOTSTRAP = {
  admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
  static_resources: {
    listeners: [
      {
        name: 'ingress',
        address: { socket_address: { address: '127.0.0.1', port_value: 0 } },
        filter_chains: [
          {
            filters: [
              {
                name: 'envoy.filters.network.http_connection_manager',
                typed_config: {
                  '@type': HCM,
                  stat_prefix: 'ingress',
                  codec_type: 'AUTO',
                  route_config: {
                    virtual_hosts: [
                      { name: 'all', domains: ['*'], routes: [{ match: { prefix: '/' }, direct_response: { status: 200, body: { inline_string: 'ok\n' } } }] },
                    ],
                  },
                  http_filters: [{ name: 'envoy.filters.http.router', typed_config: { '@type': ROUTER } }],
                },
              },
            ],
          },
        ],
      },
    ],
  },
} as unknown as Bootstrap;

export async function startHealthyEnvoy(): Promise<{ port: number; stop(): Promise<void> }> {
  const envoy = await startRealEnvoy({ bootstrap: HEALTHY_BOOTSTRAP });
  const port = envoy.ports.ingress;
  if (port === undefined) throw new Error('the healthy Envoy bound no ingress port');
  return { port, stop: () => envoy.stop() };
}
