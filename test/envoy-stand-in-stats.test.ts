// The stand-in's /stats: rendering and filtering, and gauges driven by real client sockets.
import http2 from 'node:http2';
import { describe, expect, it, vi } from 'vitest';
import { standInHarness } from './support/envoy/harness.js';
import { adminRequest, parseAddress } from './support/envoy/http1-client.js';
import type { EnvoyStandIn } from './support/envoy/stand-in.js';
import { compileRe2 } from './support/envoy/stats-params.js';

const { start, h1, h2, tcp: tcpConnect, defer } = standInHarness({
  listeners: [
    { name: 'ingress', kind: 'http' },
    { name: 'db', kind: 'tcp' },
  ],
});

type JsonStat = { name: string; value: number | string } | { histograms: { computed_quantiles: Array<{ name: string }> } };

async function jsonStats(standIn: EnvoyStandIn, query: string): Promise<JsonStat[]> {
  const response = await adminRequest(standIn.adminAddress, 'GET', `/stats?format=json&${query}`);
  expect(response.status).toBe(200);
  return (JSON.parse(response.body) as { stats: JsonStat[] }).stats;
}

const names = (stats: JsonStat[]): string[] => stats.flatMap((stat) => ('name' in stat ? [stat.name] : []));

describe('/stats rendering', () => {
  it('JSON lists text readouts, then counters, then gauges, then histograms, each sorted', async () => {
    const standIn = await start();
    const byType = async (type: string): Promise<string[]> => names(await jsonStats(standIn, `type=${type}`));
    const [readouts, counters, gauges] = [await byType('TextReadouts'), await byType('Counters'), await byType('Gauges')];
    expect(readouts).toContain('control_plane.identifier');
    expect(counters).toContain('listener.ingress.downstream_cx_total');
    expect(gauges).toContain('server.total_connections');
    for (const group of [readouts, counters, gauges]) expect(group).toEqual([...group].sort());
    const all = await jsonStats(standIn, '');
    expect(names(all)).toEqual([...readouts, ...counters, ...gauges]);
    const last = all.at(-1);
    expect(last !== undefined && 'histograms' in last).toBe(true);
    for (const stat of all) if ('name' in stat && typeof stat.value === 'number') expect(Number.isInteger(stat.value)).toBe(true);
  });

  it('plain text is `name: value` lines', async () => {
    const standIn = await start();
    const response = await adminRequest(standIn.adminAddress, 'GET', String.raw`/stats?filter=^server\.(live|concurrency)$`);
    expect(response.body).toBe('server.concurrency: 2\nserver.live: 1\n');
    expect(response.headers['content-type']).toBe('text/plain; charset=UTF-8');
  });

  it.each([
    { filter: 'total_connections', expected: ['server.total_connections'] },
    { filter: '^total_connections', expected: [] },
    { filter: String.raw`^listener\.ingress\.worker_\d+\.downstream_cx_active$`, expected: ['listener.ingress.worker_0.downstream_cx_active', 'listener.ingress.worker_1.downstream_cx_active'] },
    { filter: 'INGRESS', expected: [] },
    { filter: '(?i)^SERVER\\.LIVE$', expected: ['server.live'] },
    { filter: '(?P<p>http)\\.ingress\\.downstream_cx_active', expected: ['http.ingress.downstream_cx_active'] },
  ])('filter=$filter matches anywhere unless anchored', async ({ filter, expected }) => {
    const standIn = await start();
    expect(names(await jsonStats(standIn, `type=Gauges&filter=${encodeURIComponent(filter)}`))).toEqual(expected);
  });

  it.each(['(?=a)', '(?!a)', '(?<=a)', '(?<!a)', '(a)\\1', 'a\\k<x>', '[', '(', 'a**', '(?<x>a)\\k<x>'])('RE2 refuses %s', (pattern) => {
    expect(compileRe2(pattern)).toBeUndefined();
  });

  it.each(['\\\\1', '[(?=]', 'a|b', '^x$', '[\\d]+', '(?P<n>a)'])('RE2 accepts %s', (pattern) => {
    expect(compileRe2(pattern)).toBeInstanceOf(RegExp);
  });

  it('a bad filter answers 400 Invalid re2 regex', async () => {
    const standIn = await start();
    for (const filter of ['(?!x)', '(a)\\2', '[']) {
      const response = await adminRequest(standIn.adminAddress, 'GET', `/stats?filter=${encodeURIComponent(filter)}`);
      expect(response).toMatchObject({ status: 400, body: 'Invalid re2 regex' });
    }
  });

  it('usedonly drops stats never written', async () => {
    const standIn = await start();
    const filter = String.raw`filter=^listener\.ingress\.downstream_cx_total$`;
    expect(names(await jsonStats(standIn, filter))).toEqual(['listener.ingress.downstream_cx_total']);
    expect(names(await jsonStats(standIn, `${filter}&usedonly`))).toEqual([]);
    await h1(standIn.listenerPort('ingress'));
    await vi.waitFor(() => expect(standIn.stat('listener.ingress.downstream_cx_total')).toBe(1));
    expect(await jsonStats(standIn, `${filter}&usedonly`)).toEqual([{ name: 'listener.ingress.downstream_cx_total', value: 1 }]);
  });

  it('histograms appear once flushed, in JSON, text and prometheus', async () => {
    const standIn = await start({ statsFlushIntervalMs: 100 });
    const client = await h1(standIn.listenerPort('ingress'));
    await client.request('GET', '/');
    client.close();
    const query = String.raw`filter=^listener\.ingress\.downstream_cx_length_ms$`;
    const before = await jsonStats(standIn, query);
    expect(before).toMatchObject([{ histograms: { computed_quantiles: [{ name: 'listener.ingress.downstream_cx_length_ms' }] } }]);
    const text = await vi.waitFor(async () => {
      const response = await adminRequest(standIn.adminAddress, 'GET', `/stats?${query}`);
      expect(response.body).not.toContain('No recorded values');
      return response;
    });
    expect(text.body).toMatch(/^listener\.ingress\.downstream_cx_length_ms: P0\([\d.]+,[\d.]+\) .* P100\([\d.]+,[\d.]+\)\n$/);
    const prom = await adminRequest(standIn.adminAddress, 'GET', `/stats/prometheus?${query}`);
    expect(prom.body).toContain('# TYPE envoy_listener_ingress_downstream_cx_length_ms histogram\n');
    expect(prom.body).toContain('envoy_listener_ingress_downstream_cx_length_ms_count{} 1\n');
  });

  it('prometheus turns prefixes and worker ids into labels', async () => {
    const standIn = await start();
    const prom = (await adminRequest(standIn.adminAddress, 'GET', '/stats/prometheus?filter=downstream_cx_active')).body;
    expect(prom).toContain('# TYPE envoy_http_downstream_cx_active gauge\n');
    expect(prom).toContain('envoy_http_downstream_cx_active{envoy_http_conn_manager_prefix="ingress"} 0\n');
    expect(prom).toContain('envoy_listener_ingress_downstream_cx_active{envoy_worker_id="1"} 0\n');
    expect(prom.match(/# TYPE envoy_http_downstream_cx_active /g)).toHaveLength(1);
  });
});

describe('connection gauges follow real sockets', () => {
  it('HTTP/1.1, HTTP/2 and TCP connections count up and down, per worker too', async () => {
    const standIn = await start();
    const ingress = standIn.listenerPort('ingress');
    const active = (name: string): number | undefined => standIn.stat(`listener.${name}.downstream_cx_active`);
    const workers = (name: string): number =>
      (standIn.stat(`listener.${name}.worker_0.downstream_cx_active`) ?? 0) + (standIn.stat(`listener.${name}.worker_1.downstream_cx_active`) ?? 0);

    const http1 = await h1(ingress);
    expect((await http1.request('GET', '/')).body).toBe('envoy stand-in: listener ingress\n');
    const h2raw = await h2(ingress);
    await h2raw.request('/').done;
    const h2node = http2.connect(`http://127.0.0.1:${ingress}`);
    defer(() => h2node.destroy());
    const status = await new Promise<unknown>((resolve) => {
      let seen: unknown;
      const stream = h2node.request({ ':path': '/' }).on('response', (headers) => (seen = headers[':status']));
      stream.resume().on('end', () => resolve(seen)).end();
    });
    expect(status).toBe(200);
    const tcp = await tcpConnect(standIn.listenerPort('db'));
    tcp.write('ping');
    expect(String(await new Promise((resolve) => tcp.once('data', resolve)))).toBe('ping');

    expect(active('ingress')).toBe(3);
    expect(workers('ingress')).toBe(3);
    expect(standIn.stat('listener.ingress.worker_0.downstream_cx_active')).toBe(2);
    expect(standIn.stat('http.ingress.downstream_cx_active')).toBe(3);
    expect(standIn.stat('http.ingress.downstream_cx_http1_active')).toBe(1);
    expect(standIn.stat('http.ingress.downstream_cx_http2_active')).toBe(2);
    expect(standIn.stat('http.ingress.downstream_rq_total')).toBe(3);
    expect(active('db')).toBe(1);
    expect(standIn.stat('http.db.downstream_cx_active')).toBeUndefined();

    // The admin API reports the same live values.
    const live = await jsonStats(standIn, String.raw`filter=^listener\.(ingress|db)\.downstream_cx_active$`);
    expect(live).toEqual([
      { name: 'listener.db.downstream_cx_active', value: 1 },
      { name: 'listener.ingress.downstream_cx_active', value: 3 },
    ]);

    http1.close();
    await vi.waitFor(() => expect(active('ingress')).toBe(2));
    h2raw.close();
    h2node.close();
    tcp.destroy();
    await vi.waitFor(() => {
      expect(active('ingress')).toBe(0);
      expect(active('db')).toBe(0);
    });
    expect(workers('ingress')).toBe(0);
    expect(standIn.stat('http.ingress.downstream_cx_active')).toBe(0);
    expect(standIn.stat('listener.ingress.downstream_cx_total')).toBe(3);
    expect(standIn.stat('listener.ingress.worker_0.downstream_cx_total')).toBe(2);
    expect(standIn.stat('listener.ingress.worker_1.downstream_cx_total')).toBe(1);
  });

  it('an HTTP/1.1 request split across packets still parses after sniffing', async () => {
    const standIn = await start();
    const socket = await tcpConnect(standIn.listenerPort('ingress'));
    const reply = new Promise<string>((resolve) => socket.once('data', (chunk) => resolve(String(chunk))));
    socket.write('P');
    await new Promise((resolve) => setTimeout(resolve, 20));
    socket.write('OST / HTTP/1.1\r\nhost: x\r\ncontent-length: 0\r\n\r\n');
    expect(await reply).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
  });

  it('admin connections count under listener.admin but never in server.total_connections', async () => {
    const standIn = await start({ statsFlushIntervalMs: 100 });
    const admin = await h1(parseAddress(standIn.adminAddress));
    const data = await tcpConnect(standIn.listenerPort('db'));
    await vi.waitFor(() => expect(standIn.stat('listener.db.downstream_cx_active')).toBe(1));
    expect((await admin.request('GET', '/ready')).status).toBe(200);
    expect(standIn.stat('listener.admin.downstream_cx_active')).toBe(1);
    expect(standIn.stat('listener.admin.main_thread.downstream_cx_active')).toBe(1);
    expect(standIn.stat('http.admin.downstream_cx_active')).toBe(1);
    await vi.waitFor(() => expect(standIn.stat('server.total_connections')).toBe(1));
    // Several more flushes go by: still only the data-plane connection.
    const query = String.raw`/stats?format=json&filter=^server\.total_connections$`;
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(JSON.parse((await admin.request('GET', query)).body)).toEqual({ stats: [{ name: 'server.total_connections', value: 1 }] });
    data.destroy();
    await vi.waitFor(() => expect(standIn.stat('server.total_connections')).toBe(0));
    expect(standIn.stat('http.admin.downstream_rq_total')).toBeGreaterThanOrEqual(2);
  });
});

describe('server.total_connections is only recomputed at a stats flush', () => {
  it('stays at its flushed value while live gauges move', async () => {
    const standIn = await start({ statsFlushIntervalMs: 60_000 });
    await tcpConnect(standIn.listenerPort('db'));
    await h1(standIn.listenerPort('ingress'));
    await vi.waitFor(() => expect(standIn.stat('listener.ingress.downstream_cx_active')).toBe(1));
    expect(standIn.stat('listener.db.downstream_cx_active')).toBe(1);
    expect(standIn.stat('server.total_connections')).toBe(0);
    expect(await jsonStats(standIn, 'filter=total_connections')).toEqual([{ name: 'server.total_connections', value: 0 }]);
  });

  it('moves at the next flush tick, both ways', async () => {
    const standIn = await start({ statsFlushIntervalMs: 200 });
    const sockets = await Promise.all([tcpConnect(standIn.listenerPort('db')), tcpConnect(standIn.listenerPort('db'))]);
    await vi.waitFor(() => expect(standIn.stat('server.total_connections')).toBe(2), { timeout: 5_000 });
    for (const socket of sockets) socket.destroy();
    await vi.waitFor(() => expect(standIn.stat('listener.db.downstream_cx_active')).toBe(0));
    await vi.waitFor(() => expect(standIn.stat('server.total_connections')).toBe(0), { timeout: 5_000 });
  });

  it('with statsFlushOnAdmin a /stats request flushes, but shows the previous value', async () => {
    await expect(start({ statsFlushOnAdmin: true, statsFlushIntervalMs: 50 })).rejects.toThrow('exclusive');
    const standIn = await start({ statsFlushOnAdmin: true });
    await tcpConnect(standIn.listenerPort('db'));
    await vi.waitFor(() => expect(standIn.stat('listener.db.downstream_cx_active')).toBe(1));
    // No flush timer in this mode: nothing moves on its own.
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(standIn.stat('server.total_connections')).toBe(0);
    expect(await jsonStats(standIn, 'filter=total_connections')).toEqual([{ name: 'server.total_connections', value: 0 }]);
    expect(await jsonStats(standIn, 'filter=total_connections')).toEqual([{ name: 'server.total_connections', value: 1 }]);
  });
});
