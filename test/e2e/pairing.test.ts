// The drain learns which connection manager serves which listener from real Envoy's own stats,
// never from their names: a bootstrap shaped like the generated ones (a listener named by its
// address, its connection manager by something else; a stats listener a scraper keeps calling)
// ends early with idle pooled connections; a TCP proxy beside HTTP on one listener keeps it busy;
// and stats that cannot pair them (a stats matcher drops the per-listener names) make every
// connection busy, with one log line saying why.

import { once } from 'node:events';
import { Agent, request } from 'node:http';
import { connect, createServer, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import type { Bootstrap } from '../support/chart/bootstrap.js';
import { type RunningCli, runCli, startCli, tempDir } from '../support/cli.js';
import { type Connection, idleHttp1, idleHttp2 } from '../support/protocols/clients.js';
import { type RealEnvoy, startRealEnvoy } from '../support/real-envoy/process.js';

const HCM = 'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager';
const ROUTER = { name: 'envoy.filters.http.router', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router' } };

function httpChain(prefix: string, http2 = false): object {
  return {
    filters: [
      {
        name: 'envoy.filters.network.http_connection_manager',
        typed_config: {
          '@type': HCM,
          stat_prefix: prefix,
          ...(http2 ? { codec_type: 'AUTO' } : {}),
          http_filters: [ROUTER],
          route_config: {
            virtual_hosts: [
              { name: 'all', domains: ['*'], routes: [{ match: { prefix: '/' }, direct_response: { status: 200, body: { inline_string: 'ok\n' } } }] },
            ],
          },
        },
      },
    ],
  };
}

/**
 * `listener_0` has no stat prefix (its stats are named by its address) and the connection manager
 * `ingress_http`, as Envoy's getting-started configuration; `stats` is where a scraper calls, its
 * connection manager `eg-stats-http`; `tcp` is a TCP proxy, never idle.
 */
const BOOTSTRAP = {
  admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
  static_resources: {
    listeners: [
      { name: 'listener_0', address: { socket_address: { address: '127.0.0.1', port_value: 0 } }, filter_chains: [httpChain('ingress_http', true)] },
      {
        name: 'stats',
        stat_prefix: 'stats-listener',
        address: { socket_address: { address: '127.0.0.1', port_value: 0 } },
        filter_chains: [httpChain('eg-stats-http')],
      },
    ],
  },
} as unknown as Bootstrap;

const DRAIN = ['--connections', 'listeners', '--min-drain-duration', '1s', '--quiet-period', '1s', '--ignore-idle-connections', '--check-interval', '200ms'];

type Defer = (cleanup: () => unknown) => void;

/** Runs `body` with its own cleanups, run in reverse however it ends: the fault cases run concurrently. */
async function withCleanups(body: (defer: Defer) => Promise<void>): Promise<void> {
  const cleanups: Array<() => unknown> = [];
  try {
    await body((cleanup) => cleanups.push(cleanup));
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup();
  }
}

async function envoyWithIdleClients(defer: Defer): Promise<{ envoy: RealEnvoy; ready: string }> {
  const envoy = await startRealEnvoy({ bootstrap: BOOTSTRAP, args: ['--drain-strategy', 'immediate', '--drain-time-s', '30'] });
  defer(() => envoy.stop());
  const dir = tempDir();
  defer(dir.cleanup);
  const port = envoy.ports.listener_0 as number;
  const idle: Connection[] = [await idleHttp1(port), await idleHttp2(port)];
  defer(() => Promise.all(idle.map((c) => c.close())));
  return { envoy, ready: `${dir.path}/ready` };
}

/**
 * A metrics scraper on the stats listener, paced by the drain itself: one keep-alive GET each time
 * the hook writes a log line (it writes one at each read), one at a time, at most 300.
 */
function scrapeAlong(hook: RunningCli, port: number): { stop(): number } {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  let sent = 0;
  let answered = 0;
  let inFlight = false;
  const once = (): void => {
    if (inFlight || sent >= 300) return;
    inFlight = true;
    sent += 1;
    const req = request({ host: '127.0.0.1', port, path: '/metrics', agent }, (res) => {
      res.resume().on('end', () => {
        answered += 1;
        inFlight = false;
      });
    });
    req.on('error', () => (inFlight = false));
    req.end();
  };
  hook.child.stdout?.on('data', once);
  return {
    stop() {
      hook.child.stdout?.off('data', once);
      agent.destroy();
      return answered;
    },
  };
}

describe('pairing listeners and connection managers from real Envoy', () => {
  it('ends early with idle HTTP/1.1 and HTTP/2 pooled connections and a scraper, though no listener shares a name with its connection manager', () =>
    withCleanups(async (defer) => {
      const { envoy, ready } = await envoyWithIdleClients(defer);
      const hook = startCli([
        'shutdown',
        '--admin-address',
        envoy.adminAddress,
        '--ready-file',
        ready,
        ...DRAIN,
        '--drain-timeout',
        '15s',
        '--ignore-listener',
        'stats-listener',
      ]);
      const scraper = scrapeAlong(hook, envoy.ports.stats as number);
      defer(() => scraper.stop());
      const result = await hook.result;
      expect(scraper.stop()).toBeGreaterThan(0);

      expect(result.code, result.stdout + result.stderr).toBe(0);
      const finished = result.logs.find((l) => l.msg === 'shutdown finished');
      expect(finished).toMatchObject({ result: 'drained', connections: 0 });
      // Minimum drain (1 s) + quiet period (1 s) + 1 s.
      expect(finished?.elapsedMs).toBeLessThan(3_000);
      const paired = result.logs.find((l) => l.msg === "listeners paired with their connection managers from envoy's stats");
      expect(paired?.listeners).toEqual({
        '127.0.0.1_0': { connectionManagers: ['ingress_http'] },
        'stats-listener': { connectionManagers: ['eg-stats-http'] },
      });
      expect(result.logs.find((l) => l.msg === 'no request for the quiet period: counting only connections with a request in flight')).toMatchObject({
        connections: 2,
        inFlight: 0,
      });
    }));

  it('status says which connection manager serves each listener and how many connections carry a request', () =>
    withCleanups(async (defer) => {
      const { envoy, ready } = await envoyWithIdleClients(defer);
      const result = await runCli([
        'status',
        '--admin-address',
        envoy.adminAddress,
        '--ready-file',
        ready,
        '--connections',
        'listeners',
        '--ignore-listener',
        'stats-listener',
        '--interval',
        '100ms',
        '--output',
        'json',
      ]);
      expect(result.code, result.stderr).toBe(0);
      const report = JSON.parse(result.stdout) as { connections: Record<string, unknown> };
      expect(report.connections).toMatchObject({
        total: 2,
        listeners: { '127.0.0.1_0': 2 },
        inFlight: 0,
        pairing: { listeners: { '127.0.0.1_0': { connectionManagers: ['ingress_http'] } } },
      });
      const text = await runCli([
        'status',
        '--admin-address',
        envoy.adminAddress,
        '--ready-file',
        ready,
        '--ignore-listener',
        'stats-listener',
        '--interval',
        '100ms',
      ]);
      expect(text.stdout).toMatch(/^served by\s+127\.0\.0\.1_0 -> ingress_http, stats-listener -> eg-stats-http$/m);
    }));

  it('counts a TCP proxy connection on a listener that also serves HTTP as busy, and ends once it closes', () =>
    withCleanups(async (defer) => {
      const tcpUpstream = createServer((socket) => socket.on('error', () => {}));
      tcpUpstream.listen(0, '127.0.0.1');
      await once(tcpUpstream, 'listening');
      defer(() => new Promise((resolve) => tcpUpstream.close(resolve)));
      const upstreamPort = (tcpUpstream.address() as { port: number }).port;
      const envoy = await startRealEnvoy({ bootstrap: mixedBootstrap(upstreamPort), args: ['--drain-strategy', 'immediate', '--drain-time-s', '30'] });
      defer(() => envoy.stop());
      const port = envoy.ports.mixed as number;
      const idle = await idleHttp1(port);
      defer(() => idle.close());
      // From 127.0.0.2: the chain that proxies TCP.
      const tcp = connect({ host: '127.0.0.1', port, localAddress: '127.0.0.2' });
      tcp.on('error', () => {});
      await once(tcp, 'connect');
      defer(() => tcp.destroy());
      const dir = tempDir();
      defer(dir.cleanup);
      const hook = startCli(['shutdown', '--admin-address', envoy.adminAddress, '--ready-file', `${dir.path}/ready`, ...DRAIN, '--drain-timeout', '20s']);
      defer(() => hook.child.kill('SIGKILL'));
      const idleOnly = await hook.waitForLog((l) => l.msg === 'no request for the quiet period: counting only connections with a request in flight', 15_000);
      expect(idleOnly).toMatchObject({ connections: 2, inFlight: 1 });
      expect(hook.child.exitCode).toBeNull();
      await closeSocket(tcp);
      const result = await hook.result;
      expect(result.code, result.stdout + result.stderr).toBe(0);
      expect(result.logs.find((l) => l.msg === 'shutdown finished')).toMatchObject({ result: 'drained', connections: 0 });
      expect(idle.closed()).toBe(false);
    }));

  it('counts every connection as busy when a stats matcher drops the per-listener HTTP stats, says why once, and goes on to its timeout', () =>
    withCleanups(async (defer) => {
      const bootstrap = {
        ...BOOTSTRAP,
        stats_config: { stats_matcher: { exclusion_list: { patterns: [{ safe_regex: { regex: '^listener\\..*\\.http\\..*' } }] } } },
      } as unknown as Bootstrap;
      const envoy = await startRealEnvoy({ bootstrap, args: ['--drain-strategy', 'immediate', '--drain-time-s', '30'] });
      defer(() => envoy.stop());
      const port = envoy.ports.listener_0 as number;
      const idle: Connection[] = [await idleHttp1(port), await idleHttp2(port)];
      defer(() => Promise.all(idle.map((c) => c.close())));
      const dir = tempDir();
      defer(dir.cleanup);
      const result = await runCli(['shutdown', '--admin-address', envoy.adminAddress, '--ready-file', `${dir.path}/ready`, ...DRAIN, '--drain-timeout', '4s']);

      expect(result.code, result.stdout + result.stderr).toBe(3);
      const unknown = result.logs.filter((l) => l.msg === "listeners' connection managers unknown: every connection counts as busy");
      expect(unknown).toHaveLength(1);
      expect(String(unknown[0]?.why)).toMatch(/stats_matcher/);
      expect(result.logs.find((l) => l.msg === 'shutdown finished')).toMatchObject({ result: 'timeout', connections: 2 });
    }));
});

/** `mixed` serves HTTP (`ingress_http`) by default and proxies TCP to `upstreamPort` for clients from 127.0.0.2. */
function mixedBootstrap(upstreamPort: number): Bootstrap {
  const tcpProxy = {
    filter_chain_match: { source_prefix_ranges: [{ address_prefix: '127.0.0.2', prefix_len: 32 }] },
    filters: [
      {
        name: 'envoy.filters.network.tcp_proxy',
        typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy', stat_prefix: 'raw', cluster: 'raw' },
      },
    ],
  };
  return {
    admin: BOOTSTRAP.admin,
    static_resources: {
      listeners: [
        {
          name: 'mixed',
          address: { socket_address: { address: '127.0.0.1', port_value: 0 } },
          filter_chains: [tcpProxy],
          default_filter_chain: httpChain('ingress_http'),
        },
      ],
      clusters: [
        {
          name: 'raw',
          connect_timeout: '1s',
          load_assignment: {
            cluster_name: 'raw',
            endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: upstreamPort } } } }] }],
          },
        },
      ],
    },
  } as unknown as Bootstrap;
}

function closeSocket(socket: Socket): Promise<void> {
  const closed = once(socket, 'close').then(() => undefined);
  socket.end();
  socket.destroy();
  return closed;
}
