// The traffic stand-in (clients + load balancer) against real Envoy and plain servers: a correct drain shows zero
// failures, and each way of dropping a request (kill, refused, 5xx, short body, silence) shows up.
import http2 from 'node:http2';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Bootstrap } from '../chart/bootstrap.js';
import type { FailureKind, Protocol } from '../protocols/failures.js';
import { get, type RealEnvoy, startRealEnvoy } from '../real-envoy/process.js';
import { startUpstream, type Upstream } from '../real-envoy/upstream.js';
import { LoadBalancer } from './load-balancer.js';
import { type PlainServer, startPlainH2c, startPlainHttp1 } from './plain-servers.js';
import { activeConnections, stat, untilDeprogrammedAndIdle, waitFor } from './pod-conditions.js';
import { type Endpoint, Traffic, type TrafficOptions, type TrafficStats } from './traffic.js';

const HCM = 'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager';
const ROUTER = 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router';
const loopback = (port: number): unknown => ({ socket_address: { address: '127.0.0.1', port_value: port } });

/** A pod's Envoy: `ingress` (HTTP/1.1 or h2c, drained only when asked) proxying to the upstream (5 ms per answer). */
function podBootstrap(upstreamPort: number): Bootstrap {
  const router = { name: 'envoy.filters.http.router', typed_config: { '@type': ROUTER } };
  const routes = [{ match: { prefix: '/' }, route: { cluster: 'upstream' } }];
  const hcm = {
    '@type': HCM,
    stat_prefix: 'ingress',
    codec_type: 'AUTO',
    route_config: { virtual_hosts: [{ name: 'all', domains: ['*'], routes }] },
    http_filters: [router],
  };
  const upstream = {
    name: 'upstream',
    type: 'STATIC',
    connect_timeout: '1s',
    load_assignment: { cluster_name: 'upstream', endpoints: [{ lb_endpoints: [{ endpoint: { address: loopback(upstreamPort) } }] }] },
  };
  const ingress = {
    name: 'ingress',
    stat_prefix: 'ingress',
    drain_type: 'MODIFY_ONLY',
    address: loopback(0),
    filter_chains: [{ filters: [{ name: 'envoy.filters.network.http_connection_manager', typed_config: hcm }] }],
  };
  return { admin: { address: loopback(0) }, static_resources: { listeners: [ingress], clusters: [upstream] } } as unknown as Bootstrap;
}

let upstream: Upstream;
beforeAll(async () => {
  upstream = await startUpstream();
});
afterAll(() => upstream.close());

const running: Traffic[] = [];
const servers: PlainServer[] = [];
const envoys: RealEnvoy[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((traffic) => traffic.stop()));
  await Promise.all(servers.splice(0).map((server) => server.close()));
  await Promise.all(envoys.splice(0).map((envoy) => envoy.stop()));
});

async function startTraffic(options: TrafficOptions): Promise<Traffic> {
  const traffic = await Traffic.start(options);
  running.push(traffic);
  return traffic;
}

async function startPod(): Promise<RealEnvoy> {
  const envoy = await startRealEnvoy({ bootstrap: podBootstrap(upstream.port), args: ['--drain-strategy', 'immediate', '--drain-time-s', '60'] });
  envoys.push(envoy);
  return envoy;
}

/** Two pods: the one Kubernetes terminates and the one the LB moves new connections to. */
async function startPods(): Promise<{ terminating: RealEnvoy; healthy: RealEnvoy; endpoints: { terminating: Endpoint; healthy: Endpoint } }> {
  const [terminating, healthy] = await Promise.all([startPod(), startPod()]);
  const endpoint = (envoy: RealEnvoy): Endpoint => ({ host: '127.0.0.1', port: envoy.ports.ingress as number });
  return { terminating, healthy, endpoints: { terminating: endpoint(terminating), healthy: endpoint(healthy) } };
}

/** Envoy dies at once, as when its container is killed. */
async function kill(envoy: RealEnvoy): Promise<void> {
  envoy.child.kill('SIGKILL');
  await envoy.exited;
}

const drain = async (envoy: RealEnvoy): Promise<void> => {
  const answer = await get(envoy.adminAddress, '/drain_listeners?graceful&skip_exit', 'POST');
  expect(answer.status).toBe(200);
};
const kinds = (stats: TrafficStats, protocol?: Protocol): Set<FailureKind> =>
  new Set(stats.failures.filter((failure) => protocol === undefined || failure.protocol === protocol).map((failure) => failure.kind));

describe('load balancer', () => {
  it('sends every new connection to the terminating pod until the deprogramming delay has passed', () => {
    let now = 1_000;
    const lb = new LoadBalancer({ terminating: { host: 'a', port: 1 }, healthy: { host: 'b', port: 2 } }, () => now);
    expect(lb.connectTarget()).toBe('terminating');
    lb.terminationStarted(300);
    now += 299;
    expect(lb.connectTarget()).toBe('terminating');
    lb.terminationStarted(0); // marked terminating once: a repeat changes nothing
    now += 1;
    expect(lb.connectTarget()).toBe('healthy');
    expect(lb.endpoint('healthy')).toEqual({ host: 'b', port: 2 });
    expect(() => lb.terminationStarted(-1)).toThrow(TypeError);
  });

  it('rejects bad options before opening any socket', async () => {
    const endpoint = { host: '127.0.0.1', port: 9 };
    await expect(Traffic.start({ terminating: endpoint, healthy: endpoint, http1Clients: 0, http2Clients: 0 })).rejects.toThrow(/at least one client/);
    await expect(Traffic.start({ terminating: endpoint, healthy: { host: 'x', port: 0 }, thinkTimeMs: -1 })).rejects.toThrow(/thinkTimeMs[\s\S]*healthy/);
  });
});

describe('traffic against real Envoy', () => {
  it('steady load: zero failures, both protocols carry requests, churn reconnects through the LB', async () => {
    const { terminating, endpoints } = await startPods();
    const traffic = await startTraffic(endpoints);
    // 6 clients' first connections, then several churned ones (one every 250 ms).
    await waitFor('churn and load', () => traffic.stats.connections.terminating >= 9 && traffic.stats.requests.terminating >= 200);
    const stats = await traffic.stop();

    expect(stats.failures).toEqual([]);
    expect(stats.requests.healthy).toBe(0);
    expect(stats.connections.healthy).toBe(0);
    // More than the 4 first connections: churn starts with the HTTP/1.1 clients.
    const admin = terminating.adminAddress;
    expect(await stat(admin, 'http.ingress.downstream_cx_http1_total')).toBeGreaterThan(4);
    expect(await stat(admin, 'http.ingress.downstream_cx_http2_total')).toBeGreaterThanOrEqual(2);
    // The pod's own count agrees with the clients', and stop() left no connection behind.
    await waitFor('server-side counts to settle', async () => (await activeConnections(admin)) === 0);
    expect(await stat(admin, 'http.ingress.downstream_rq_2xx')).toBe(stats.requests.terminating);
    expect(await stat(admin, 'listener.ingress.downstream_cx_total')).toBe(stats.connections.terminating);
    expect(traffic.stats).toEqual(stats); // nothing counted after stop()
  });

  it('graceful path: deprogram, drain, kill once idle -> zero failures, traffic moved to the healthy pod', async () => {
    const { terminating, healthy, endpoints } = await startPods();
    const traffic = await startTraffic(endpoints);
    traffic.terminationStarted(300);
    await drain(terminating);
    await untilDeprogrammedAndIdle(terminating.adminAddress, traffic);
    const atIdle = traffic.stats;
    const drainCloses = await stat(terminating.adminAddress, 'http.ingress.downstream_cx_drain_close');
    await kill(terminating);
    const killedAt = Date.now();
    await waitFor('load on the healthy pod', () => traffic.stats.requests.healthy >= atIdle.requests.healthy + 100);
    const stats = await traffic.stop();

    expect(stats.failures).toEqual([]);
    expect(stats.connections.terminating).toBe(atIdle.connections.terminating);
    expect(stats.requests.terminating).toBe(atIdle.requests.terminating);
    expect(stats.lastRequestToTerminatingAt).toBeLessThanOrEqual(killedAt);
    expect(drainCloses).toBeGreaterThan(0);
    expect(await stat(healthy.adminAddress, 'http.ingress.downstream_cx_http1_total')).toBeGreaterThan(0);
    expect(await stat(healthy.adminAddress, 'http.ingress.downstream_cx_http2_total')).toBeGreaterThan(0);
  });

  it('kill without drain, under load -> resets and refused connections, for both protocols', async () => {
    const { terminating, endpoints } = await startPods();
    const traffic = await startTraffic(endpoints);
    // Requests in flight (each waits 5 ms on the upstream): the kill leaves them unanswered.
    await waitFor('a request in flight', async () => (await stat(terminating.adminAddress, 'http.ingress.downstream_rq_active')) > 0);
    await kill(terminating);
    await waitFor('failures on both protocols', () => kinds(traffic.stats, 'http1').has('refused') && kinds(traffic.stats, 'http2').has('refused'));
    const stats = await traffic.stop();

    expect(kinds(stats).has('reset')).toBe(true);
    for (const kind of kinds(stats)) expect(['reset', 'refused', 'truncated']).toContain(kind);
    expect(stats.failures.every((failure) => failure.pod === 'terminating')).toBe(true);
  });

  it('LB still sending after Envoy is gone -> refused connections until the delay ends', async () => {
    const { terminating, endpoints } = await startPods();
    // Long pauses between requests leave moments with no connection open at all.
    const traffic = await startTraffic({ ...endpoints, thinkTimeMs: 100 });
    await drain(terminating);
    await waitFor('no connection open', async () => (await activeConnections(terminating.adminAddress)) === 0);
    await kill(terminating);
    // The load balancer learns of the termination only now: it keeps sending for a while, however
    // long the drain above took on a busy machine.
    traffic.terminationStarted(2000);
    await waitFor('refused on both protocols', () => kinds(traffic.stats, 'http1').has('refused') && kinds(traffic.stats, 'http2').has('refused'));
    await waitFor('the LB to move to the healthy pod', () => traffic.stats.requests.healthy >= 10);
    const stats = await traffic.stop();

    // A connection still in the accept queue at kill() is reset rather than refused.
    for (const kind of kinds(stats)) expect(['refused', 'reset']).toContain(kind);
    expect(stats.failures.every((failure) => failure.pod === 'terminating')).toBe(true);
  });

  it('HTTP/1.1 Connection: close -> a fresh connection through the LB for every later request', async () => {
    const { terminating, endpoints } = await startPods();
    const traffic = await startTraffic({ ...endpoints, http1Clients: 2, http2Clients: 0, reconnectEveryMs: 0 });
    const before = traffic.stats;
    expect(before.connections.terminating).toBe(2);
    await drain(terminating);
    await waitFor('requests after the drain', () => traffic.stats.requests.terminating >= before.requests.terminating + 50);
    const stats = await traffic.stop();

    expect(stats.failures).toEqual([]);
    // Each open connection carries at most one more request (the one told to close); every
    // other request needed a new connection. A reused socket would have shown as a reset.
    const requests = stats.requests.terminating - before.requests.terminating;
    const connections = stats.connections.terminating - before.connections.terminating;
    expect(connections).toBeGreaterThanOrEqual(requests - 2);
  });

  it('HTTP/2 GOAWAY -> clients move to new sessions with zero failures', async () => {
    const { terminating, endpoints } = await startPods();
    const traffic = await startTraffic({ ...endpoints, http1Clients: 0, http2Clients: 2, reconnectEveryMs: 0 });
    expect(traffic.stats.connections.terminating).toBe(2);
    await drain(terminating);
    // Each new session is drained at its first response too: many sessions, each told GOAWAY.
    await waitFor('sessions replaced', () => traffic.stats.connections.terminating >= 2 + 10);
    traffic.terminationStarted(0);
    await untilDeprogrammedAndIdle(terminating.adminAddress, traffic);
    const drainCloses = await stat(terminating.adminAddress, 'http.ingress.downstream_cx_drain_close');
    await kill(terminating);
    await waitFor('load on the healthy pod', () => traffic.stats.requests.healthy >= 20);
    const stats = await traffic.stop();

    expect(stats.failures).toEqual([]);
    expect(drainCloses).toBeGreaterThanOrEqual(12);
  });
});

describe('failures the clients report', () => {
  /** Runs one HTTP/1.1-only and one HTTP/2-only traffic against the two servers until each failed a few times. */
  async function failuresAgainst(h1: PlainServer, h2: PlainServer, options: Partial<TrafficOptions> = {}): Promise<TrafficStats[]> {
    servers.push(h1, h2);
    const runs = await Promise.all([
      startTraffic({ terminating: h1.endpoint, healthy: h1.endpoint, http1Clients: 2, http2Clients: 0, ...options }),
      startTraffic({ terminating: h2.endpoint, healthy: h2.endpoint, http1Clients: 0, http2Clients: 1, ...options }),
    ]);
    for (const traffic of runs) await waitFor('failures', () => traffic.stats.failures.length >= 3);
    return Promise.all(runs.map((traffic) => traffic.stop()));
  }

  it('5xx -> status', async () => {
    const body = 'unavailable\n';
    const h1 = await startPlainHttp1((_req, res) => res.writeHead(503, { 'content-length': body.length }).end(body));
    const h2 = await startPlainH2c((stream) => {
      stream.respond({ ':status': 503, 'content-length': body.length });
      stream.end(body);
    });
    for (const stats of await failuresAgainst(h1, h2)) {
      expect(stats.requests.terminating).toBe(0);
      expect(kinds(stats)).toEqual(new Set(['status']));
      expect(stats.failures[0]?.detail).toBe('status 503');
    }
  });

  it('a body short of its content-length -> truncated', async () => {
    const h1 = await startPlainHttp1((_req, res) => {
      res.writeHead(200, { 'content-length': 100 });
      res.write('0123456789', () => res.socket?.destroy());
    });
    const h2 = await startPlainH2c((stream) => {
      stream.respond({ ':status': 200, 'content-length': 100 });
      stream.write('0123456789', () => stream.session?.destroy());
    });
    // One stream per session: destroying a session also refuses its other streams (REFUSED_STREAM).
    for (const stats of await failuresAgainst(h1, h2, { streamsPerSession: 1 })) {
      expect(stats.requests.terminating).toBe(0);
      expect(kinds(stats)).toEqual(new Set(['truncated']));
    }
  });

  it('an HTTP/2 stream refused by the server -> refused-stream', async () => {
    const h2 = await startPlainH2c((stream) => stream.close(http2.constants.NGHTTP2_REFUSED_STREAM));
    servers.push(h2);
    const traffic = await startTraffic({ terminating: h2.endpoint, healthy: h2.endpoint, http1Clients: 0, http2Clients: 1 });
    const stats = await traffic.stop();
    expect(stats.failures.length).toBeGreaterThanOrEqual(2);
    expect(kinds(stats)).toEqual(new Set(['refused-stream']));
  });

  it('no answer within requestTimeoutMs -> timeout, and stop() still ends', async () => {
    const h1 = await startPlainHttp1(() => {});
    const h2 = await startPlainH2c(() => {});
    for (const stats of await failuresAgainst(h1, h2, { requestTimeoutMs: 200, reconnectEveryMs: 0 })) {
      expect(kinds(stats)).toEqual(new Set(['timeout']));
    }
  });
});
