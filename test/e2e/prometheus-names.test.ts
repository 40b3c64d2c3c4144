// The drain reads Envoy's stats through the Prometheus endpoint, where Envoy's default tags turn each
// name into a series with labels, or through the text /stats, which names each stat as Envoy does.
// Against real Envoy, for each configuration below: the two formats, read in full and usedonly
// (the answer's lines fed to statsAnswer), give the same records, and a usedonly read completed
// with the full one gives the full one's listeners and pairing. A name the tags cannot give back
// (a dotted stat_prefix) leaves the Prometheus answer unreadable, never misread, and the drain then
// reads the text /stats.
import { once } from 'node:events';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { tableOf, withFull } from '../../src/envoy/connections.js';
import type { StatRecord } from '../../src/envoy/stat-names.js';
import { type StatsFormat, statsAnswer } from '../../src/envoy/stats-answer.js';
import { type ReadKind, statsPath } from '../../src/envoy/stats-reader.js';
import type { Bootstrap } from '../support/chart/bootstrap.js';
import { runCli, tempDir } from '../support/cli.js';
import { idleHttp1, idleHttp2 } from '../support/protocols/clients.js';
import { get, type RealEnvoy, startRealEnvoy } from '../support/real-envoy/process.js';
import { waitFor } from '../support/traffic/pod-conditions.js';

const HCM = 'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager';
const ROUTER = { name: 'envoy.filters.http.router', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router' } };
const at = (address: string): object => ({ socket_address: { address, port_value: 0 } });
const LOOPBACK = at('127.0.0.1');

function httpChain(prefix: string): object {
  const routes = [{ match: { prefix: '/' }, direct_response: { status: 200, body: { inline_string: 'ok\n' } } }];
  return {
    filters: [
      {
        name: 'envoy.filters.network.http_connection_manager',
        typed_config: {
          '@type': HCM,
          stat_prefix: prefix,
          codec_type: 'AUTO',
          http_filters: [ROUTER],
          route_config: { virtual_hosts: [{ name: 'all', domains: ['*'], routes }] },
        },
      },
    ],
  };
}

const tcpChain = {
  filters: [
    {
      name: 'envoy.filters.network.tcp_proxy',
      typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy', stat_prefix: 'raw', cluster: 'raw' },
    },
  ],
};

function bootstrap(listeners: object[], clusters: object[] = []): Bootstrap {
  return { admin: { address: LOOPBACK }, static_resources: { listeners, clusters } } as unknown as Bootstrap;
}

const everything = { server: true, requests: true } as const;

/** A TCP connection held open, from `host`. */
async function held(host: string, port: number): Promise<{ close: () => Promise<void> }> {
  const socket: Socket = connect({ host, port });
  socket.on('error', () => {});
  await once(socket, 'connect');
  return {
    close: () => {
      socket.destroy();
      return Promise.resolve();
    },
  };
}

async function read(envoy: RealEnvoy, format: StatsFormat, kind: ReadKind): Promise<ReturnType<ReturnType<typeof statsAnswer>['finish']>> {
  const { status, body } = await get(envoy.adminAddress, statsPath(format, kind, everything));
  expect(status).toBe(200);
  const answer = statsAnswer(format);
  for (const line of body.split('\n')) answer.line(line);
  return answer.finish();
}

async function records(envoy: RealEnvoy, format: StatsFormat, kind: ReadKind): Promise<StatRecord[]> {
  const result = await read(envoy, format, kind);
  if (!('records' in result)) throw new Error(result.unreadable);
  return [...result.records].sort((a, b) => `${a.kind} ${a.listener} ${a.manager}`.localeCompare(`${b.kind} ${b.listener} ${b.manager}`));
}

interface Configuration {
  readonly listeners: object[];
  /** Opens the connections the configuration is read with; by listener name, the port each bound. */
  readonly traffic: (ports: Readonly<Record<string, number>>) => Promise<Array<{ close: () => Promise<void> }>>;
  /** The listeners' live connections once Envoy counted them all, by stats name. */
  readonly active: Readonly<Record<string, number>>;
  /** Records the text /stats must hold. */
  readonly holds: readonly StatRecord[];
}

const record = (kind: StatRecord['kind'], listener: string, manager: string, value: number): StatRecord => ({ kind, listener, manager, value });

/** The TCP proxy's upstream: takes connections and holds them. */
async function upstream(): Promise<{ server: Server; cluster: object }> {
  const server = createServer((socket) => socket.on('error', () => {}));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  const endpoint = { endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: port } } } };
  return { server, cluster: { name: 'raw', type: 'STATIC', load_assignment: { cluster_name: 'raw', endpoints: [{ lb_endpoints: [endpoint] }] } } };
}

const CONFIGURATIONS: ReadonlyArray<[string, Configuration]> = [
  [
    'listeners named by their address, one a TCP proxy with a connection, one never used',
    {
      listeners: [
        { name: 'tcp', address: at('127.0.0.2'), filter_chains: [tcpChain] },
        { name: 'unused', address: at('127.0.0.3'), filter_chains: [httpChain('https-10443')] },
      ],
      traffic: async (ports) => [await held('127.0.0.2', ports.tcp as number)],
      active: { '127.0.0.2_0': 1, '127.0.0.3_0': 0 },
      holds: [record('cx_active', '127.0.0.2_0', '', 1), record('rq_completed', '127.0.0.3_0', 'https-10443', 0)],
    },
  ],
  [
    'an IPv6 listener holding a connection that sent no request',
    {
      listeners: [{ name: 'six', address: at('::1'), filter_chains: [httpChain('six')] }],
      traffic: async (ports) => [await held('::1', ports.six as number)],
      active: { '[__1]_0': 1 },
      holds: [record('cx_active', '[__1]_0', '', 1), record('http_cx_active', '', 'six', 1), record('rq_completed', '[__1]_0', 'six', 0)],
    },
  ],
  [
    'listeners sharing a connection manager, one named by a one-word stat_prefix, with idle HTTP/1.1 and HTTP/2 connections',
    {
      listeners: [
        { name: 'plain', address: LOOPBACK, filter_chains: [httpChain('ingress_http')] },
        { name: 'named', stat_prefix: 'stats-listener', address: LOOPBACK, filter_chains: [httpChain('ingress_http')] },
      ],
      traffic: async (ports) => [await idleHttp1(ports.plain as number), await idleHttp2(ports.named as number)],
      active: { '127.0.0.1_0': 1, 'stats-listener': 1 },
      holds: [
        record('rq_completed', '127.0.0.1_0', 'ingress_http', 1),
        record('rq_completed', 'stats-listener', 'ingress_http', 1),
        record('http_cx_active', '', 'ingress_http', 2),
      ],
    },
  ],
];

/** Envoy counts a connection on its worker thread after the client saw it connect, and ends a request's count after the client has its answer: wait for both. */
async function settled(envoy: RealEnvoy, active: Readonly<Record<string, number>>): Promise<void> {
  await waitFor('Envoy to count every connection, with no request in flight', async () => {
    const table = tableOf(await records(envoy, 'text', 'full'));
    return (
      Object.entries(active).every(([name, n]) => table.listeners.get(name)?.active === n) &&
      [...table.http.values()].every((counts) => counts.activeRequests === 0)
    );
  });
}

/** The four reads, taken again until the text /stats read before and after them agree: server.uptime moves at each stats flush. */
async function fourReads(envoy: RealEnvoy, formats: readonly StatsFormat[]): Promise<Record<string, StatRecord[]>> {
  for (let attempt = 0; ; attempt += 1) {
    const before = await records(envoy, 'text', 'full');
    const reads: Record<string, StatRecord[]> = {};
    for (const format of formats) for (const kind of ['full', 'used'] as const) reads[`${format} ${kind}`] = await records(envoy, format, kind);
    const after = await records(envoy, 'text', 'full');
    if (JSON.stringify(after) === JSON.stringify(before) || attempt === 4) {
      expect(after).toEqual(before);
      return reads;
    }
  }
}

/** The listeners and pairing a table gives, to compare. */
const listenersAndPairs = (table: ReturnType<typeof tableOf>) => ({
  listeners: Object.fromEntries(table.listeners),
  pairs: Object.fromEntries([...table.pairs].map(([name, managers]) => [name, [...managers].sort()])),
});

describe("Envoy's stats, read in either format", () => {
  it.each(CONFIGURATIONS)('give the same records: %s', async (_what, configuration) => {
    const raw = await upstream();
    const envoy = await startRealEnvoy({ bootstrap: bootstrap(configuration.listeners, [raw.cluster]) });
    const clients: Array<{ close: () => Promise<void> }> = [];
    try {
      clients.push(...(await configuration.traffic(envoy.ports)));
      await settled(envoy, configuration.active);
      const reads = await fourReads(envoy, ['prometheus', 'text']);
      expect(reads['prometheus full']).toEqual(reads['text full']);
      expect(reads['prometheus used']).toEqual(reads['text used']);
      expect(reads['text full']).toEqual(expect.arrayContaining([...configuration.holds]));
      expect(reads['text full']?.filter((r) => r.kind === 'listener_update')).toHaveLength(4);
      const full = tableOf(reads['text full'] ?? []);
      expect(listenersAndPairs(withFull(tableOf(reads['text used'] ?? []), full))).toEqual(listenersAndPairs(full));
      // A listener that never had a connection is in the full read only.
      const never = [...full.listeners].filter(([, counts]) => counts.accepted === 0).map(([name]) => name);
      expect(reads['text used']?.filter((r) => never.includes(r.listener))).toEqual([]);
    } finally {
      await Promise.all(clients.map((client) => client.close()));
      await envoy.stop();
      raw.server.close();
    }
  });

  it('leave a dotted stat_prefix unreadable in Prometheus, never misread, and exact in the text /stats', async () => {
    const listeners = [{ name: 'dotted', stat_prefix: 'team.ingress', address: LOOPBACK, filter_chains: [httpChain('a.b')] }];
    const envoy = await startRealEnvoy({ bootstrap: bootstrap(listeners) });
    const idle = await idleHttp1(envoy.ports.dotted as number);
    try {
      await settled(envoy, { 'team.ingress': 1 });
      for (const kind of ['full', 'used'] as const) {
        expect(await read(envoy, 'prometheus', kind)).toEqual({
          unreadable: expect.stringMatching(
            /^\/stats\/prometheus names envoy_(listener_ingress|http_b)_downstream_\w+\{[^}]*\}, which this tool cannot read back/,
          ) as unknown,
        });
      }
      const reads = await fourReads(envoy, ['text']);
      expect(reads['text full']).toEqual(
        expect.arrayContaining([
          record('cx_active', 'team.ingress', '', 1),
          record('cx_total', 'team.ingress', '', 1),
          record('rq_completed', 'team.ingress', 'a.b', 1),
          record('http_cx_active', '', 'a.b', 1),
        ]),
      );
      const full = tableOf(reads['text full'] ?? []);
      expect(listenersAndPairs(withFull(tableOf(reads['text used'] ?? []), full))).toEqual(listenersAndPairs(full));
    } finally {
      await idle.close();
      await envoy.stop();
    }
  });

  it("a listener's stat_prefix with a dot sends the drain to the text /stats, saying why, and it still ends early on idle connections", async () => {
    const envoy = await startRealEnvoy({
      bootstrap: bootstrap([{ name: 'dotted', stat_prefix: 'team.ingress', address: LOOPBACK, filter_chains: [httpChain('ingress_http')] }]),
      args: ['--drain-strategy', 'immediate', '--drain-time-s', '30'],
    });
    const dir = tempDir();
    const idle = await idleHttp1(envoy.ports.dotted as number);
    try {
      const args = [
        '--connections',
        'listeners',
        '--ignore-idle-connections',
        '--min-drain-duration',
        '500ms',
        '--quiet-period',
        '500ms',
        '--check-interval',
        '200ms',
        '--drain-timeout',
        '15s',
      ];
      const result = await runCli(['shutdown', '--admin-address', envoy.adminAddress, '--ready-file', `${dir.path}/ready`, ...args]);
      expect(result.code, result.stdout + result.stderr).toBe(0);
      const reads = result.logs.filter((l) => l.msg === "reading envoy's stats with this request: what it costs envoy's main thread, at most");
      expect(reads.length).toBeGreaterThan(0);
      for (const line of reads) {
        expect(String(line.read)).toMatch(/^GET \/stats\?/);
        expect(String(line.why)).toMatch(/envoy_listener_ingress_downstream_cx_(active|total)\{envoy_listener_address="team"\}/);
      }
      expect(result.logs.find((l) => l.msg === "listeners paired with their connection managers from envoy's stats")?.listeners).toEqual({
        'team.ingress': { connectionManagers: ['ingress_http'] },
      });
      expect(result.logs.find((l) => l.msg === 'shutdown finished')).toMatchObject({ result: 'drained', connections: 0 });
      expect(idle.closed()).toBe(false);
    } finally {
      await idle.close();
      await envoy.stop();
      dir.cleanup();
    }
  });
});
