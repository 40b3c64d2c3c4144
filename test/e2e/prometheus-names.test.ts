// The drain reads Envoy's stats through its Prometheus endpoint, whose cost does not grow with the
// number of filter chains, and turns each series back into the stat's name. Against real Envoy:
// every stat it reads that way is the one, with the value, the JSON /stats gives (listeners named
// by their address or by a stat_prefix of one word, IPv4 and a TCP proxy; the read's own filter
// leaves out the per-worker copies); a usedonly read completed with the full one's zeros is the
// full read; and a name it cannot turn back (a stat_prefix with a dot) sends the drain to the JSON
// /stats, saying so once.
import { once } from 'node:events';
import { connect, createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { parsePrometheusStats } from '../../src/envoy/prometheus-stats.js';
import { isListenerUpdateStat, PER_THREAD_COPY, statsFilter } from '../../src/envoy/stat-names.js';
import { statsReadPaths, withUnused } from '../../src/envoy/stats-reader.js';
import { parseStatsJson, type Stat } from '../../src/envoy/stats.js';
import type { Bootstrap } from '../support/chart/bootstrap.js';
import { runCli, tempDir } from '../support/cli.js';
import { get, startRealEnvoy } from '../support/real-envoy/process.js';
import { waitFor } from '../support/traffic/pod-conditions.js';
import { idleHttp1, idleHttp2 } from '../support/traffic/side-clients.js';

const HCM = 'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager';
const ROUTER = { name: 'envoy.filters.http.router', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router' } };
const LOOPBACK = { socket_address: { address: '127.0.0.1', port_value: 0 } };

function httpChain(prefix: string): object {
  const routes = [{ match: { prefix: '/' }, direct_response: { status: 200, body: { inline_string: 'ok\n' } } }];
  return { filters: [{ name: 'envoy.filters.network.http_connection_manager', typed_config: { '@type': HCM, stat_prefix: prefix, codec_type: 'AUTO', http_filters: [ROUTER], route_config: { virtual_hosts: [{ name: 'all', domains: ['*'], routes }] } } }] };
}

function bootstrap(listeners: object[]): Bootstrap {
  return { admin: { address: LOOPBACK }, static_resources: { listeners, clusters: [] } } as unknown as Bootstrap;
}

const everything = { server: true, requests: true } as const;

/** What the JSON /stats says of the stats the drain reads, per-thread copies and the admin API's own left out. */
function fromJson(body: string): Stat[] {
  return parseStatsJson(body)
    .filter(({ name }) => !/^(listener|http)\.admin\./.test(name) && !PER_THREAD_COPY.test(name.replace(/\.downstream_cx_(active|total)$/, '')))
    .sort((a, b) => a.name.localeCompare(b.name));
}

function readable(body: string): Stat[] {
  const parsed = parsePrometheusStats(body);
  if (!('stats' in parsed)) throw new Error(parsed.unreadable);
  return parsed.stats;
}

describe("Envoy's Prometheus names, read back", () => {
  it('give every stat the JSON /stats gives, with its value; a usedonly read completed with zeros gives the same', async () => {
    const upstream = createServer((socket) => socket.on('error', () => {}));
    upstream.listen(0, '127.0.0.1');
    await once(upstream, 'listening');
    const tcpProxy = { filters: [{ name: 'envoy.filters.network.tcp_proxy', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy', stat_prefix: 'raw', cluster: 'raw' } }] };
    const config = bootstrap([
      { name: 'plain', address: LOOPBACK, filter_chains: [httpChain('ingress_http')] },
      { name: 'named', stat_prefix: 'stats-listener', address: LOOPBACK, filter_chains: [httpChain('eg-stats-http')] },
      { name: 'unused', address: { socket_address: { address: '127.0.0.3', port_value: 0 } }, filter_chains: [httpChain('https-10443')] },
      { name: 'tcp', address: { socket_address: { address: '127.0.0.2', port_value: 0 } }, filter_chains: [tcpProxy] },
    ]);
    const port = (upstream.address() as { port: number }).port;
    const raw = { name: 'raw', type: 'STATIC', load_assignment: { cluster_name: 'raw', endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: port } } } }] }] } };
    const envoy = await startRealEnvoy({ bootstrap: { ...config, static_resources: { ...(config as { static_resources: object }).static_resources, clusters: [raw] } } as unknown as Bootstrap });
    const clients = [await idleHttp1(envoy.ports['plain'] as number), await idleHttp2(envoy.ports['named'] as number)];
    const tcp = connect({ host: '127.0.0.2', port: envoy.ports['tcp'] as number });
    tcp.on('error', () => {});
    try {
      await once(tcp, 'connect');
      const paths = statsReadPaths(everything);
      // Envoy counts a connection on its worker thread, after the client has seen it connect, and
      // ends a request's count after the client has its answer: the reads below wait for both.
      const settled = (stats: readonly Stat[]): boolean =>
        stats.some(({ name, value }) => name === 'listener.127.0.0.2_0.downstream_cx_active' && value === 1) && stats.every(({ name, value }) => !name.endsWith('.downstream_rq_active') || value === 0);
      await waitFor('Envoy to count the TCP connection, with no request in flight', async () => settled(fromJson((await get(envoy.adminAddress, paths.json)).body)));
      const json = fromJson((await get(envoy.adminAddress, paths.json)).body);
      const full = readable((await get(envoy.adminAddress, paths.full)).body);
      const usedOnly = readable((await get(envoy.adminAddress, paths.usedOnly)).body);
      const jsonAgain = fromJson((await get(envoy.adminAddress, paths.json)).body);

      expect(jsonAgain).toEqual(json); // nothing moved between the reads
      const sorted = (stats: readonly Stat[]): Stat[] => stats.filter(({ name }) => !isListenerUpdateStat(name)).sort((a, b) => a.name.localeCompare(b.name));
      expect(sorted(full)).toEqual(json);
      expect(json.map((stat) => stat.name)).toEqual(expect.arrayContaining(['listener.stats-listener.downstream_cx_active', 'listener.127.0.0.3_0.http.https-10443.downstream_rq_completed', 'listener.127.0.0.2_0.downstream_cx_active']));
      expect(json.find((stat) => stat.name === 'listener.127.0.0.2_0.downstream_cx_active')?.value).toBe(1);
      expect(full.filter(({ name }) => isListenerUpdateStat(name)).length).toBeGreaterThan(0);
      // The unused listener is in the full read only.
      expect(usedOnly.length).toBeLessThan(full.length);
      expect(usedOnly.some((stat) => stat.name.startsWith('listener.127.0.0.3_0.'))).toBe(false);
      expect(withUnused(new Map(full.map((stat) => [stat.name, stat])), usedOnly)).toEqual(full);
      expect(statsFilter(everything)).not.toMatch(/listener_manager/); // the JSON read needs no update counters: it is always full
    } finally {
      tcp.destroy();
      await Promise.all(clients.map((client) => client.close()));
      await envoy.stop();
      upstream.close();
    }
  });

  it("a listener's stat_prefix with a dot sends the drain to the JSON /stats, said once, and it still ends early on idle connections", async () => {
    const envoy = await startRealEnvoy({ bootstrap: bootstrap([{ name: 'dotted', stat_prefix: 'team.ingress', address: LOOPBACK, filter_chains: [httpChain('ingress_http')] }]), args: ['--drain-strategy', 'immediate', '--drain-time-s', '30'] });
    const dir = tempDir();
    const idle = await idleHttp1(envoy.ports['dotted'] as number);
    try {
      const args = ['--connections', 'listeners', '--ignore-idle-connections', '--min-drain-duration', '500ms', '--quiet-period', '500ms', '--check-interval', '200ms', '--drain-timeout', '15s'];
      const result = await runCli(['shutdown', '--admin-address', envoy.adminAddress, '--ready-file', `${dir.path}/ready`, ...args]);
      expect(result.code, result.stdout + result.stderr).toBe(0);
      const json = result.logs.filter((l) => l.msg === "reading envoy's stats as JSON, which costs envoy more on a large configuration");
      expect(json).toHaveLength(1);
      expect(String(json[0]?.['why'])).toMatch(/envoy_listener_ingress_downstream_cx_(active|total)\{envoy_listener_address="team"\}/);
      expect(result.logs.find((l) => l.msg === "listeners paired with their connection managers from envoy's stats")?.['listeners']).toEqual({ 'team.ingress': { connectionManagers: ['ingress_http'] } });
      expect(result.logs.find((l) => l.msg === 'shutdown finished')).toMatchObject({ result: 'drained', connections: 0 });
      expect(idle.closed()).toBe(false);
    } finally {
      await idle.close();
      await envoy.stop();
      dir.cleanup();
    }
  });
});
