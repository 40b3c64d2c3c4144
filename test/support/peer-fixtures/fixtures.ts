// The peers' real Envoy configuration (test/fixtures/peers/, see its README): each fixture as a
// bootstrap real Envoy loads without a control plane. Envoy Gateway's are `egctl experimental
// translate` config dumps (its bootstrap plus the xDS it would serve); Contour's are `contour
// bootstrap` output, alone or with listeners shaped as its xDS server builds them.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parse } from 'yaml';
import { arrayField, clone, deleteField, isObject, type Json, type JsonObject, objectField, setField, stringField, typed } from './proto-json.js';
import { byName, clustersOnBackend, inlineRoutes, staticSecrets, type TestEnvironment } from './static-bootstrap.js';

export const FIXTURES_DIR = resolve('test/fixtures/peers');

export type PeerName = 'envoy-gateway' | 'contour';

export interface PeerFixture {
  readonly peer: PeerName;
  /** The case's folder name, e.g. `tls-passthrough`. */
  readonly name: string;
  readonly dir: string;
  /** A bootstrap Envoy loads on its own: static listeners, clusters on the test's backend, the test's certificate. */
  bootstrap(env: TestEnvironment): JsonObject;
}

/** Clusters through which the peer's control plane talks to Envoy: nothing to reach in a test. */
const CONTROL_PLANE_CLUSTERS = new Set(['xds_cluster', 'contour']);

export function peerFixtures(): PeerFixture[] {
  return (['envoy-gateway', 'contour'] as const).flatMap((peer) =>
    readdirSync(join(FIXTURES_DIR, peer), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => fixture(peer, entry.name, join(FIXTURES_DIR, peer, entry.name)))
      .filter((found): found is PeerFixture => found !== undefined),
  );
}

export function peerFixture(peer: PeerName, name: string): PeerFixture {
  const found = fixture(peer, name, join(FIXTURES_DIR, peer, name));
  if (found === undefined) throw new Error(`no peer fixture ${peer}/${name}`);
  return found;
}

function fixture(peer: PeerName, name: string, dir: string): PeerFixture | undefined {
  const file = (base: string): string | undefined => (existsSync(join(dir, base)) ? join(dir, base) : undefined);
  const xds = file('xds.yaml');
  const bootstrapFile = file('bootstrap.yaml');
  if (peer === 'envoy-gateway' && xds !== undefined) return { peer, name, dir, bootstrap: (env) => egTranslated(readYaml(xds), env) };
  if (peer === 'envoy-gateway' && bootstrapFile !== undefined)
    return { peer, name, dir, bootstrap: (env) => standalone(egBootstrapOf(readYaml(bootstrapFile)), [], [], [], env) };
  if (peer === 'contour' && (xds !== undefined || name === 'bootstrap')) {
    const contourBootstrap = join(FIXTURES_DIR, 'contour', 'bootstrap', 'envoy.json');
    return { peer, name, dir, bootstrap: (env) => contourWith(readYaml(contourBootstrap), xds === undefined ? {} : readYaml(xds), env) };
  }
  return undefined; // a folder of other output (the generated pods)
}

function readYaml(path: string): JsonObject {
  const parsed = parse(readFileSync(path, 'utf8')) as Json;
  if (!isObject(parsed)) throw new Error(`${path}: not a YAML/JSON object`);
  return parsed;
}

/** `egctl experimental translate --to xds --type all`: one config dump per proxy (the case has exactly one). */
function egTranslated(output: JsonObject, env: TestEnvironment): JsonObject {
  const proxies = Object.values(objectField(output, 'xds') ?? {}).filter(isObject);
  if (proxies.length !== 1) throw new Error(`expected the config of one proxy, found ${proxies.length}`);
  const configs = arrayField(proxies[0] as JsonObject, 'configs');
  const section = (type: string, list: string, key: string): JsonObject[] =>
    arrayField(typed(configs, type) ?? {}, list)
      .filter(isObject)
      .map((entry) => withoutType(objectField(entry, key) ?? objectField(objectField(entry, 'active_state') ?? {}, key) ?? {}));
  const bootstrap = objectField(typed(configs, 'BootstrapConfigDump') ?? {}, 'bootstrap');
  if (bootstrap === undefined) throw new Error('no bootstrap in the config dump');
  const listeners = section('ListenersConfigDump', 'dynamic_listeners', 'listener');
  const routes = section('RoutesConfigDump', 'dynamic_route_configs', 'route_config');
  const clusters = section('ClustersConfigDump', 'dynamic_active_clusters', 'cluster');
  const endpoints = section('EndpointsConfigDump', 'dynamic_endpoint_configs', 'endpoint_config');
  return standalone(bootstrap, listeners, routes, clusters, env, endpoints);
}

/** A dumped resource is an Any (it names its `@type`); in a bootstrap it is the message itself. */
function withoutType(resource: JsonObject): JsonObject {
  const { '@type': _type, ...rest } = resource;
  return rest;
}

/** `egctl experimental translate --type bootstrap`: the bootstrap under its one proxy's key. */
function egBootstrapOf(output: JsonObject): JsonObject {
  const proxies = Object.values(objectField(output, 'xds') ?? {}).filter(isObject);
  const bootstrap = proxies.length === 1 ? objectField(proxies[0] as JsonObject, 'bootstrap') : undefined;
  if (bootstrap === undefined) throw new Error('expected the bootstrap of one proxy');
  return bootstrap;
}

/** `contour bootstrap` output with the listeners, routes and clusters Contour's xDS server would add. */
function contourWith(bootstrap: JsonObject, xds: JsonObject, env: TestEnvironment): JsonObject {
  const list = (key: string): JsonObject[] => arrayField(xds, key).filter(isObject);
  return standalone(bootstrap, list('listeners'), list('routes'), list('clusters'), env);
}

/**
 * The bootstrap without its control plane: no dynamic resources, runtime layers or cluster from it;
 * the xDS listeners, routes (inlined), clusters and secrets made static beside its own.
 */
function standalone(
  original: JsonObject,
  listeners: JsonObject[],
  routes: JsonObject[],
  clusters: JsonObject[],
  env: TestEnvironment,
  endpoints: JsonObject[] = [],
): JsonObject {
  const bootstrap = clone(original);
  deleteField(bootstrap, 'dynamic_resources');
  // Runtime layers delivered by the control plane (RTDS) have nothing to come from.
  const runtime = objectField(bootstrap, 'layered_runtime');
  if (runtime !== undefined)
    setField(
      runtime,
      'layers',
      arrayField(runtime, 'layers').filter((layer) => !isObject(layer) || objectField(layer, 'rtds_layer') === undefined),
    );
  const resources = objectField(bootstrap, 'static_resources') ?? {};
  const allListeners = [...arrayField(resources, 'listeners').filter(isObject), ...listeners.map((l) => clone(l))];
  inlineRoutes(allListeners, byName(routes));
  const ownClusters = arrayField(resources, 'clusters')
    .filter(isObject)
    .filter((c) => !CONTROL_PLANE_CLUSTERS.has(stringField(c, 'name') ?? ''));
  const allClusters = [
    ...ownClusters.filter((c) => !needsBackend(c)),
    ...clustersOnBackend([...ownClusters.filter(needsBackend), ...clusters], byName(endpoints), env),
  ];
  const secrets = staticSecrets(allListeners, env);
  setField(bootstrap, 'static_resources', { ...resources, listeners: allListeners, clusters: allClusters, ...(secrets.length === 0 ? {} : { secrets }) });
  return bootstrap;
}

/** A cluster whose endpoints come from a control plane (EDS), as opposed to a fixed one such as the admin socket. */
function needsBackend(cluster: JsonObject): boolean {
  return stringField(cluster, 'type') === 'EDS' || objectField(cluster, 'eds_cluster_config') !== undefined;
}
