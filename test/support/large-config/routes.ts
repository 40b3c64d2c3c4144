// The peers' plain HTTP fixtures grown to many routes and clusters at test time. Envoy Gateway's
// `http` case gets one HTTPRoute per backend, each with one rule matching its own path prefix: EG
// makes a cluster per route rule backend, so N routes bring N clusters. Contour's `ingress` case
// gets N virtual hosts on `ingress_http` (its RDS route configuration, inlined as the fixtures
// inline it), each with a few routes to its own service's cluster. Every route, virtual host and
// cluster is a copy of the fixture's own, renamed as the peer names one; each cluster stays static
// on the test's backend. Nothing of this size is committed.
import { type PeerName, peerFixture } from '../peer-fixtures/fixtures.js';
import { arrayField, clone, eachObject, field, isObject, type JsonObject, objectField, setField, stringField } from '../peer-fixtures/proto-json.js';
import type { TestEnvironment } from '../peer-fixtures/static-bootstrap.js';
import { connectionManager, hostname } from './expand.js';

/** The path prefix Envoy Gateway's route `index` matches (an HTTPRoute `svc-<index>` with one PathPrefix rule). */
export function servicePath(index: number): string {
  return `/svc-${index}`;
}

/** Envoy Gateway's `http` fixture with `count` HTTPRoutes, each to its own cluster, before the fixture's catch-all route. */
export function egBackends(count: number, env: TestEnvironment): JsonObject {
  const { bootstrap, virtualHost, template } = httpFixture('envoy-gateway', 'http', 'default/eg/http', count, env);
  const cluster = clusterNamed(bootstrap, template.cluster);
  const routes = Array.from({ length: count }, (_, i) => {
    const route = forHttpRoute(template.route, `svc-${i}`);
    // EG's PathPrefix match; the longer prefixes come first, as EG sorts them.
    setField(route, 'match', { path_separated_prefix: servicePath(i) });
    return route;
  });
  setField(virtualHost, 'routes', [...routes, template.route]);
  addClusters(
    bootstrap,
    Array.from({ length: count }, (_, i) => forHttpRoute(cluster, `svc-${i}`)),
  );
  return bootstrap;
}

/** A copy of the fixture's route or cluster of the HTTPRoute `web`, for the HTTPRoute `name`: its names, cluster and metadata. */
function forHttpRoute(template: JsonObject, name: string): JsonObject {
  const copy = JSON.parse(JSON.stringify(template).replaceAll('httproute/default/web/', `httproute/default/${name}/`)) as JsonObject;
  eachObject(copy, (object) => {
    if (object.kind === 'HTTPRoute' && object.name === 'web') object.name = name;
  });
  return copy;
}

/** How many routes each of Contour's virtual hosts has, by default. */
export const CONTOUR_ROUTES_PER_HOST = 4;

/** Contour's `ingress` fixture with `count` virtual hosts on `ingress_http` (hostname(0, i)), each with `routesPerHost` routes to its own service, before the fixture's `*` host. */
export function contourVirtualHosts(count: number, env: TestEnvironment, routesPerHost = CONTOUR_ROUTES_PER_HOST): JsonObject {
  const { bootstrap, routeConfig, virtualHost, template } = httpFixture('contour', 'ingress', 'ingress_http', count, env);
  const cluster = clusterNamed(bootstrap, template.cluster);
  const clusters: JsonObject[] = [];
  const hosts = Array.from({ length: count }, (_, i) => {
    // Contour names a service's cluster <namespace>/<service>/<port>/<hash>, its stats <namespace>_<service>_<port>.
    const name = `default/svc-${i}/3000/da39a3ee5e`;
    const copy = clone(cluster);
    setField(copy, 'name', name);
    setField(copy, 'alt_stat_name', `default_svc-${i}_3000`);
    setField(objectField(copy, 'load_assignment') ?? {}, 'cluster_name', name);
    clusters.push(copy);
    // The host's catch-all last, as Contour orders prefixes (longest first).
    const routes = Array.from({ length: routesPerHost }, (_, k) => {
      const route = clone(template.route);
      setField(route, 'match', { prefix: k === routesPerHost - 1 ? '/' : `/path-${k}` });
      setField(objectField(route, 'route') ?? {}, 'cluster', name);
      return route;
    });
    return { name: hostname(0, i), domains: [hostname(0, i)], routes };
  });
  setField(routeConfig, 'virtual_hosts', [...hosts, virtualHost]);
  addClusters(bootstrap, clusters);
  return bootstrap;
}

interface HttpFixture {
  readonly bootstrap: JsonObject;
  /** The route configuration inlined in the listener's connection manager, and its first virtual host. */
  readonly routeConfig: JsonObject;
  readonly virtualHost: JsonObject;
  /** That host's first route, and the cluster it sends to. */
  readonly template: { readonly route: JsonObject; readonly cluster: string };
}

/** The peer's fixture as a bootstrap, and where `listener`'s routes are in it. */
function httpFixture(peer: PeerName, fixture: string, listener: string, count: number, env: TestEnvironment): HttpFixture {
  if (count < 1) throw new Error(`a size needs at least one route: ${count}`);
  const bootstrap = peerFixture(peer, fixture).bootstrap(env);
  const found = listenersOf(bootstrap).find((l) => stringField(l, 'name') === listener);
  const chains = [...arrayField(found ?? {}, 'filter_chains'), field(found ?? {}, 'default_filter_chain') ?? null].filter(isObject);
  const routeConfig = chains.map((chain) => objectField(connectionManager(chain) ?? {}, 'route_config')).find((config) => config !== undefined);
  const [virtualHost] = arrayField(routeConfig ?? {}, 'virtual_hosts').filter(isObject);
  const [route] = arrayField(virtualHost ?? {}, 'routes').filter(isObject);
  const cluster = stringField(objectField(route ?? {}, 'route') ?? {}, 'cluster');
  if (routeConfig === undefined || virtualHost === undefined || route === undefined || cluster === undefined)
    throw new Error(`${peer}/${fixture}: ${listener} has no inlined route to a cluster`);
  return { bootstrap, routeConfig, virtualHost, template: { route, cluster } };
}

function listenersOf(bootstrap: JsonObject): JsonObject[] {
  return arrayField(objectField(bootstrap, 'static_resources') ?? {}, 'listeners').filter(isObject);
}

function clusterNamed(bootstrap: JsonObject, name: string): JsonObject {
  const found = arrayField(objectField(bootstrap, 'static_resources') ?? {}, 'clusters')
    .filter(isObject)
    .find((cluster) => stringField(cluster, 'name') === name);
  if (found === undefined) throw new Error(`no cluster ${name} in the fixture`);
  return found;
}

function addClusters(bootstrap: JsonObject, clusters: readonly JsonObject[]): void {
  const resources = objectField(bootstrap, 'static_resources') ?? {};
  setField(resources, 'clusters', [...arrayField(resources, 'clusters'), ...clusters]);
}
