// The expander of the peers' HTTP fixtures: as many routes and clusters as asked, each named as the
// peer names one and sent to its own cluster, everything else in the fixture kept.
import { describe, expect, it } from 'vitest';
import { peerFixture } from '../peer-fixtures/fixtures.js';
import { arrayField, field, isObject, type JsonObject, objectField, stringField } from '../peer-fixtures/proto-json.js';
import { connectionManager, hostname } from './expand.js';
import { contourVirtualHosts, egBackends, servicePath } from './routes.js';

const env = { backend: { address: '127.0.0.1', port: 3000 }, certificate: { certFile: '/cert.pem', keyFile: '/key.pem' } };

const resources = (bootstrap: JsonObject): JsonObject => objectField(bootstrap, 'static_resources') ?? {};
const clusterNames = (bootstrap: JsonObject): string[] =>
  arrayField(resources(bootstrap), 'clusters')
    .filter(isObject)
    .map((c) => stringField(c, 'name') ?? '');

/** The virtual hosts of `listener`'s inlined route configuration. */
function virtualHosts(bootstrap: JsonObject, listener: string): JsonObject[] {
  const found =
    arrayField(resources(bootstrap), 'listeners')
      .filter(isObject)
      .find((l) => stringField(l, 'name') === listener) ?? {};
  const chain = [...arrayField(found, 'filter_chains'), field(found, 'default_filter_chain') ?? null].filter(isObject)[0] ?? {};
  return arrayField(objectField(connectionManager(chain) ?? {}, 'route_config') ?? {}, 'virtual_hosts').filter(isObject);
}

const routesOf = (host: JsonObject): JsonObject[] => arrayField(host, 'routes').filter(isObject);
const clusterOf = (route: JsonObject): string | undefined => stringField(objectField(route, 'route') ?? {}, 'cluster');

describe("the peers' HTTP fixtures, grown", () => {
  it("Envoy Gateway: one route per HTTPRoute, each to its own static cluster on the backend, before the fixture's catch-all", () => {
    const fixture = peerFixture('envoy-gateway', 'http').bootstrap(env);
    const bootstrap = egBackends(300, env);
    const [host, ...others] = virtualHosts(bootstrap, 'default/eg/http');
    expect(others).toEqual([]);
    const routes = routesOf(host ?? {});
    expect(routes).toHaveLength(301);
    expect(routes.at(-1)).toEqual(routesOf(virtualHosts(fixture, 'default/eg/http')[0] ?? {})[0]);
    for (const [i, route] of routes.slice(0, 300).entries()) {
      expect(field(route, 'match')).toEqual({ path_separated_prefix: servicePath(i) });
      expect(stringField(route, 'name')).toBe(`httproute/default/svc-${i}/rule/0/match/0/*`);
      expect(clusterOf(route)).toBe(`httproute/default/svc-${i}/rule/0`);
    }
    expect(clusterNames(bootstrap)).toEqual([...clusterNames(fixture), ...Array.from({ length: 300 }, (_, i) => `httproute/default/svc-${i}/rule/0`)]);
    const last = arrayField(resources(bootstrap), 'clusters').filter(isObject).at(-1) ?? {};
    expect(stringField(last, 'type')).toBe('STATIC');
    expect(JSON.stringify(last)).toContain('"clusterName":"httproute/default/svc-299/rule/0"');
    expect(JSON.stringify(last)).toContain('{"kind":"HTTPRoute","name":"svc-299","namespace":"default"}');
    expect(JSON.stringify(last)).not.toContain('web');
  });

  it("Contour: N virtual hosts on ingress_http, each its routes to its own service's cluster, the fixture's `*` host last", () => {
    const fixture = peerFixture('contour', 'ingress').bootstrap(env);
    const bootstrap = contourVirtualHosts(200, env, 4);
    const hosts = virtualHosts(bootstrap, 'ingress_http');
    expect(hosts).toHaveLength(201);
    expect(hosts.at(-1)).toEqual(virtualHosts(fixture, 'ingress_http')[0]);
    for (const [i, host] of hosts.slice(0, 200).entries()) {
      expect(stringField(host, 'name')).toBe(hostname(0, i));
      expect(arrayField(host, 'domains')).toEqual([hostname(0, i)]);
      expect(routesOf(host).map((route) => field(route, 'match'))).toEqual([
        { prefix: '/path-0' },
        { prefix: '/path-1' },
        { prefix: '/path-2' },
        { prefix: '/' },
      ]);
      expect(new Set(routesOf(host).map(clusterOf))).toEqual(new Set([`default/svc-${i}/3000/da39a3ee5e`]));
    }
    const added = arrayField(resources(bootstrap), 'clusters').filter(isObject).slice(clusterNames(fixture).length);
    expect(added.map((c) => [stringField(c, 'name'), stringField(c, 'alt_stat_name')])).toEqual(
      Array.from({ length: 200 }, (_, i) => [`default/svc-${i}/3000/da39a3ee5e`, `default_svc-${i}_3000`]),
    );
    // The HTTPS listener and its chains are the fixture's.
    expect(virtualHosts(bootstrap, 'ingress_https')).toEqual(virtualHosts(fixture, 'ingress_https'));
  });

  it('refuses an empty size', () => {
    expect(() => egBackends(0, env)).toThrow(/at least one/);
    expect(() => contourVirtualHosts(0, env)).toThrow(/at least one/);
  });
});
