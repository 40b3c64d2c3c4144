import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { countToDecideOn, inFlight, requestsReceived } from '../../../src/drain/count.js';
import type { ConnectionReading } from '../../../src/envoy/envoy-control.js';
import { segmentOtherThan, statsFilter } from '../../../src/envoy/stat-names.js';

const READ = { path: '/stats?usedonly&filter=x', priceMs: 0.2 };
const listeners = (active: Record<string, number>) => new Map(Object.entries(active).map(([name, n]) => [name, { active: n, accepted: 0 }]));
const http = (counts: Record<string, [connections: number, activeRequests: number, requests: number]>) =>
  new Map(Object.entries(counts).map(([name, [connections, activeRequests, requests]]) => [name, { connections, activeRequests, requests }]));

describe('countToDecideOn with --connections total', () => {
  const reading = (total: number, uptimeS: number | undefined, live = 0): ConnectionReading => ({
    read: READ,
    connections: total,
    listeners: listeners({ ingress: live }),
    ...(uptimeS === undefined ? {} : { uptimeS }),
  });
  const decide = (r: ConnectionReading, flushBaselineS: number | undefined) => countToDecideOn(r, { source: 'total', flushBaselineS, idleIgnored: false });

  it('does not know the count until Envoy flushed its stats after the drain began', () => {
    expect(decide(reading(0, 0, 2), 0)).toBeUndefined(); // the gauge Envoy reports before its first flush
    expect(decide(reading(0, 5, 0), 5)).toBeUndefined();
    expect(decide(reading(0, 5, 0), undefined)).toBeUndefined();
    expect(decide(reading(0, undefined, 0), 0)).toBeUndefined(); // no uptime: no proof of a flush
  });

  it('after such a flush, takes the live listener gauges as a floor', () => {
    expect(decide(reading(0, 10, 0), 5)).toBe(0);
    expect(decide(reading(3, 10, 1), 5)).toBe(3); // connections closed since the flush: still counted until the next one
    expect(decide(reading(0, 10, 2), 5)).toBe(2); // connections opened since the flush
  });
});

describe('countToDecideOn with --connections listeners', () => {
  it('takes the live sum as it is', () => {
    expect(
      countToDecideOn(
        { connections: 4, listeners: listeners({ ingress: 4 }), read: READ },
        { source: 'listeners', flushBaselineS: undefined, idleIgnored: false },
      ),
    ).toBe(4);
  });
});

describe('idle connections', () => {
  // Listener stats names unlike their connection managers', as generated configurations have them.
  const topology = {
    byStatName: new Map([
      ['0.0.0.0_10080', { connectionManagers: new Set(['http-10080']) }],
      ['0.0.0.0_10443', { connectionManagers: new Set(['grpc_api']) }],
      ['raw', { connectionManagers: new Set<string>() }],
    ]),
  };
  const reading: ConnectionReading = {
    read: READ,
    connections: 9,
    listeners: listeners({ '0.0.0.0_10080': 5, '0.0.0.0_10443': 2, raw: 2 }),
    // 10080: 5 HTTP connections, 1 request in flight; 10443: 2 idle; raw: a TCP proxy, never idle.
    http: http({ 'http-10080': [5, 1, 40], grpc_api: [2, 0, 7] }),
    ignored: new Set(),
    pairing: { topology, key: 'k' },
  };

  it('once ignored, counts requests in flight and every connection that is not HTTP, by the pairing Envoy reported', () => {
    expect(inFlight(reading)).toBe(1 + 0 + 2);
    expect(countToDecideOn(reading, { source: 'listeners', flushBaselineS: undefined, idleIgnored: true })).toBe(3);
    expect(countToDecideOn(reading, { source: 'total', flushBaselineS: undefined, idleIgnored: true })).toBe(3); // live gauges: no flush needed
    expect(countToDecideOn(reading, { source: 'listeners', flushBaselineS: undefined, idleIgnored: false })).toBe(9);
  });

  it('counts an HTTP/2 connection with three streams as three, and a non-HTTP connection beside HTTP ones as busy', () => {
    const one = { byStatName: new Map([['l', { connectionManagers: new Set(['h']) }]]) };
    expect(inFlight({ connections: 2, listeners: listeners({ l: 2 }), http: http({ h: [1, 3, 3] }), pairing: { topology: one, key: 'k' }, read: READ })).toBe(
      1 + 3,
    );
  });

  it("sums the requests ever received by the counted listeners' managers, for the quiet period", () => {
    expect(requestsReceived(reading)).toBe(47);
    expect(requestsReceived({ connections: 0, read: READ })).toBeUndefined();
  });
});

describe('statsFilter', () => {
  const matches = (wanted: Parameters<typeof statsFilter>[0], name: string): boolean => new RegExp(statsFilter(wanted)).test(name);

  it('asks in one request for what the mode needs', () => {
    const listener = ['listener.0.0.0.0_10443.downstream_cx_active', 'listener.0.0.0.0_10443.downstream_cx_total', 'listener.admin.downstream_cx_active'];
    const server = ['server.total_connections', 'server.uptime'];
    const requests = [
      'http.https-10443.downstream_cx_active',
      'http.https-10443.downstream_rq_active',
      'http.https-10443.downstream_rq_total',
      'listener.0.0.0.0_10443.http.https-10443.downstream_rq_completed',
    ];
    for (const name of listener) expect([matches({}, name), matches({ server: true }, name), matches({ requests: true }, name)]).toEqual([true, true, true]);
    for (const name of server) expect([matches({}, name), matches({ server: true }, name)]).toEqual([false, true]);
    for (const name of requests) expect([matches({}, name), matches({ requests: true }, name)]).toEqual([false, true]);
    expect(matches({}, 'listener_manager.listener_added')).toBe(true);
    for (const name of ['listener.a.downstream_cx_destroy', 'http.a.downstream_rq_2xx', 'cluster.a.upstream_cx_active'])
      expect(matches({ server: true, requests: true }, name)).toBe(false);
  });

  it('leaves out the per-worker copies of the listener stats, and only them', () => {
    for (const name of [
      'listener.0.0.0.0_10443.worker_0.downstream_cx_active',
      'listener.0.0.0.0_10443.worker_17.downstream_cx_total',
      'listener.worker_3.downstream_cx_active',
    ])
      expect(matches({}, name)).toBe(false);
    for (const name of [
      'listener.worker.downstream_cx_active',
      'listener.worker_.downstream_cx_active',
      'listener.a.worker_1x.downstream_cx_active',
      'listener.admin.main_thread.downstream_cx_active',
      'listener.[__]_443.downstream_cx_active',
    ])
      expect(matches({}, name)).toBe(true);
  });

  it('takes any last segment but worker_<digits>', () => {
    const segment = new RegExp(`^${segmentOtherThan('worker_')}$`);
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.constantFrom('worker_', 'worker_1', 'worker_12a', 'work', 'worker_0_')), (text) => {
        const name = text.replaceAll('.', '').replaceAll('\n', '');
        fc.pre(name !== '');
        expect(segment.test(name)).toBe(!/^worker_[0-9]+$/.test(name));
      }),
    );
  });
});
