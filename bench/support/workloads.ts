// What the large-config scenario grows, one size at a time: Envoy Gateway's TLS filter chains and
// listeners, its `http` listener with a route and a cluster per backend, Contour's `ingress_http`
// with many virtual hosts, or idle client connections on EG's `http` listener. For each: the
// bootstrap (the peer's fixture grown at run time, on loopback) and where the bench's traffic goes.
import { hostname, type LargeConfigSize, largeBootstrap, onLoopback } from '../../test/support/large-config/expand.js';
import { contourVirtualHosts, egBackends, servicePath } from '../../test/support/large-config/routes.js';
import { testCertificate } from '../../test/support/peer-fixtures/certificate.js';
import { peerFixture } from '../../test/support/peer-fixtures/fixtures.js';
import type { JsonObject } from '../../test/support/peer-fixtures/proto-json.js';

export type Workload =
  | { readonly kind: 'config'; readonly size: LargeConfigSize }
  | { readonly kind: 'clusters'; readonly clusters: number }
  | { readonly kind: 'virtual-hosts'; readonly hosts: number }
  | { readonly kind: 'connections'; readonly idle: number };

/** One request's target: the Host header (and TLS server name) and the path. */
export interface Target {
  readonly host: string;
  readonly path: string;
}

export interface Traffic {
  /** The listener the clients use, and the stats listener the scraper keeps a connection on (their names). */
  readonly listener: string;
  readonly statsListener: string;
  readonly tls: boolean;
  /** Where the idle pooled connections send their one request, and the busy request (the backend holds a path ending in /hold). */
  readonly idle: Target;
  readonly busy: Target;
}

const EG_STATS_LISTENER = 'envoy-gateway-proxy-stats-0.0.0.0-19001';

/** The workload's bootstrap on loopback, its clusters on the backend at `backendPort`, its admin API (which its stats listener reaches) on `adminPort`. */
export function bootstrapFor(workload: Workload, backendPort: number, adminPort: number): JsonObject {
  const env = { backend: { address: '127.0.0.1', port: backendPort }, certificate: testCertificate() };
  const fixture = (): JsonObject => {
    switch (workload.kind) {
      case 'config':
        return largeBootstrap('envoy-gateway', workload.size, env);
      case 'clusters':
        return egBackends(workload.clusters, env);
      case 'virtual-hosts':
        return contourVirtualHosts(workload.hosts, env);
      case 'connections':
        return peerFixture('envoy-gateway', 'http').bootstrap(env);
    }
  };
  return onLoopback(fixture(), adminPort);
}

/** The busy request goes through the last chain, route or virtual host: the one Envoy matches last. */
export function trafficFor(workload: Workload): Traffic {
  const egHttp = { listener: 'default/eg/http', statsListener: EG_STATS_LISTENER, tls: false };
  switch (workload.kind) {
    case 'config':
      return {
        listener: 'default/eg/https',
        statsListener: EG_STATS_LISTENER,
        tls: true,
        idle: { host: hostname(0, 0), path: '/' },
        busy: { host: hostname(0, workload.size.chainsPerListener - 1), path: '/hold' },
      };
    case 'clusters':
      return {
        ...egHttp,
        idle: { host: 'www.example.com', path: `${servicePath(0)}/` },
        busy: { host: 'www.example.com', path: `${servicePath(workload.clusters - 1)}/hold` },
      };
    case 'virtual-hosts':
      return {
        listener: 'ingress_http',
        statsListener: 'stats-health',
        tls: false,
        idle: { host: hostname(0, 0), path: '/' },
        busy: { host: hostname(0, workload.hosts - 1), path: '/hold' },
      };
    case 'connections':
      return { ...egHttp, idle: { host: 'www.example.com', path: '/' }, busy: { host: 'www.example.com', path: '/hold' } };
  }
}
