// The expander of the peers' HTTPS fixtures: the counts asked for, each chain one host's in the
// peer's own shape, everything else in the fixture kept.
import { describe, expect, it } from 'vitest';
import { listenerSummaries } from '../peer-fixtures/listeners.js';
import { arrayField, field, isObject, type Json, type JsonObject, objectField, stringField } from '../peer-fixtures/proto-json.js';
import { connectionManager, FIRST_EXTRA_PORT, hostname, largeBootstrap, onLoopback } from './expand.js';

const env = { backend: { address: '127.0.0.1', port: 3000 }, certificate: { certFile: '/cert.pem', keyFile: '/key.pem' } };

function listenersOf(bootstrap: JsonObject): JsonObject[] {
  return arrayField(objectField(bootstrap, 'static_resources') ?? {}, 'listeners').filter(isObject);
}

function chainsOf(listener: JsonObject): JsonObject[] {
  return arrayField(listener, 'filter_chains').filter(isObject);
}

describe("the peers' HTTPS fixtures, grown", () => {
  it("Envoy Gateway: N chains on default/eg/https, one server name and route domain each, EG's prefix, access log and TLS", () => {
    const bootstrap = largeBootstrap('envoy-gateway', { listeners: 1, chainsPerListener: 250 }, env);
    const summaries = listenerSummaries(bootstrap);
    expect(summaries.map((l) => l.name)).toEqual(['envoy-gateway-proxy-stats-0.0.0.0-19001', 'envoy-gateway-proxy-ready-0.0.0.0-19003', 'default/eg/https']);
    const https = summaries[2];
    expect(https?.statName).toBe('0.0.0.0_10443');
    expect(https?.chains).toHaveLength(250);
    expect(https?.chains.every((c) => c.kind === 'http' && c.statPrefix === 'https-10443')).toBe(true);
    expect(https?.chains.map((c) => c.serverNames)).toEqual(Array.from({ length: 250 }, (_, i) => [hostname(0, i)]));
    const chains = chainsOf(listenersOf(bootstrap)[2] ?? {});
    expect(new Set(chains.map((c) => stringField(c, 'name'))).size).toBe(250);
    for (const [i, chain] of chains.entries()) {
      const hcm = connectionManager(chain) ?? {};
      expect(arrayField(hcm, 'access_log'), `chain ${i}`).toHaveLength(1);
      expect(objectField(chain, 'transport_socket'), `chain ${i}`).toBeDefined();
      const hosts = arrayField(objectField(hcm, 'route_config') ?? {}, 'virtual_hosts').filter(isObject);
      expect(
        hosts.map((h) => arrayField(h, 'domains')),
        `chain ${i}`,
      ).toEqual([[hostname(0, i)]]);
    }
    // One static secret for the certificate every chain names, as in the fixture.
    expect(arrayField(objectField(bootstrap, 'static_resources') ?? {}, 'secrets')).toHaveLength(1);
  });

  it('Envoy Gateway: M listeners on their own ports, each named and prefixed after its port', () => {
    const summaries = listenerSummaries(largeBootstrap('envoy-gateway', { listeners: 40, chainsPerListener: 3 }, env)).filter((l) =>
      l.name.startsWith('default/eg/'),
    );
    expect(summaries).toHaveLength(40);
    expect(summaries[0]).toMatchObject({ name: 'default/eg/https', statName: '0.0.0.0_10443' });
    for (const [n, listener] of summaries.slice(1).entries()) {
      const port = FIRST_EXTRA_PORT + n;
      expect(listener).toEqual({
        name: `default/eg/https-${port}`,
        statName: `0.0.0.0_${port}`,
        chains: [0, 1, 2].map((i) => ({ kind: 'http', statPrefix: `https-${port}`, serverNames: [hostname(n + 1, i)] })),
      });
    }
  });

  it('Contour: N chains with prefix ingress_https and routes https/<host>, the passthrough chain kept beside them', () => {
    const bootstrap = largeBootstrap('contour', { listeners: 2, chainsPerListener: 100 }, env);
    const summaries = listenerSummaries(bootstrap);
    expect(summaries.map((l) => l.name)).toEqual(['stats-health', 'ingress_http', 'ingress_https', `https-${FIRST_EXTRA_PORT}`]);
    const https = summaries[2];
    expect(https?.chains).toHaveLength(101);
    expect(https?.chains.slice(0, 100).every((c) => c.kind === 'http' && c.statPrefix === 'ingress_https')).toBe(true);
    expect(https?.chains[100]).toEqual({ kind: 'tcp', statPrefix: 'ingress_https', serverNames: ['pass.example.test'] });
    const route = objectField(connectionManager(chainsOf(listenersOf(bootstrap)[2] ?? {})[7] ?? {}) ?? {}, 'route_config') ?? {};
    expect(stringField(route, 'name')).toBe(`https/${hostname(0, 7)}`);
  });

  it('on loopback: every listener and the admin API on 127.0.0.1 port 0, nothing else changed', () => {
    const bootstrap = largeBootstrap('envoy-gateway', { listeners: 3, chainsPerListener: 2 }, env);
    const moved = onLoopback(bootstrap);
    // Read in either spelling: Envoy Gateway's fixture is lowerCamelCase.
    const where = (holder: JsonObject): [Json | undefined, Json | undefined] => {
      const socket = objectField(objectField(holder, 'address') ?? {}, 'socket_address') ?? {};
      return [field(socket, 'address'), field(socket, 'port_value')];
    };
    expect(listenersOf(moved).map(where)).toEqual(listenersOf(moved).map(() => ['127.0.0.1', 0]));
    expect(where(objectField(moved, 'admin') ?? {})).toEqual(['127.0.0.1', 0]);
    expect(listenersOf(bootstrap).map(where)[0]).toEqual(['0.0.0.0', 19001]);
    expect(listenersOf(moved).map(chainsOf)).toEqual(listenersOf(bootstrap).map(chainsOf));
    // Each listener's stats keep the name the peer's fixed address gives them.
    expect(listenerSummaries(moved).map((l) => l.statName)).toEqual(listenerSummaries(bootstrap).map((l) => l.statName));
    expect(listenerSummaries(moved).map((l) => l.statName)).toEqual([
      '0.0.0.0_19001',
      '0.0.0.0_19003',
      '0.0.0.0_10443',
      `0.0.0.0_${FIRST_EXTRA_PORT}`,
      `0.0.0.0_${FIRST_EXTRA_PORT + 1}`,
    ]);
  });

  it("on loopback: the admin API on the port asked for, the clusters that reach it with it, Contour's socket included", () => {
    for (const [peer, cluster] of [
      ['envoy-gateway', 'prometheus_stats'],
      ['contour', 'envoy-admin'],
    ] as const) {
      const moved = onLoopback(largeBootstrap(peer, { listeners: 1, chainsPerListener: 1 }, env), 19_500);
      const address = field(objectField(moved, 'admin') ?? {}, 'address') ?? null;
      expect(JSON.stringify(address), peer).toMatch(/^\{"socket_?[aA]ddress":\{"address":"127\.0\.0\.1","port_?[vV]alue":19500\}\}$/);
      const admin =
        arrayField(objectField(moved, 'static_resources') ?? {}, 'clusters')
          .filter(isObject)
          .find((c) => stringField(c, 'name') === cluster) ?? {};
      expect(JSON.stringify(admin), peer).toContain(JSON.stringify({ address }));
    }
  });

  it('refuses an empty size', () => {
    expect(() => largeBootstrap('envoy-gateway', { listeners: 0, chainsPerListener: 1 }, env)).toThrow(/at least one/);
  });
});
