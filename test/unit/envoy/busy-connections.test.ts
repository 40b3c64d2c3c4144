import { describe, expect, it } from 'vitest';
import {
  describePairing,
  ignoredListeners,
  type ListenerServes,
  type ListenerTopology,
  type Pairing,
  pairedCounts,
} from '../../../src/envoy/busy-connections.js';

const serves = (managers: string[], extra: Partial<ListenerServes> = {}): ListenerServes => ({ connectionManagers: new Set(managers), ...extra });
const paired = (entries: Record<string, ListenerServes>): Pairing => ({ topology: { byStatName: new Map(Object.entries(entries)) }, key: 'k' });
const active = (counts: Record<string, number | undefined>) => new Map(Object.entries(counts).map(([name, n]) => [name, { active: n, accepted: undefined }]));
const http = (counts: Record<string, [connections: number, inFlight: number, requests: number]>) =>
  new Map(Object.entries(counts).map(([prefix, [connections, activeRequests, requests]]) => [prefix, { connections, activeRequests, requests }]));

describe('pairedCounts', () => {
  it('judges listeners that share a connection manager together', () => {
    const pairing = paired({ a: serves(['shared']), b: serves(['shared', 'b_only']) });
    // 4 + 3 connections; the shared manager has 5 of them (1 busy), b_only 2 (idle).
    expect(pairedCounts(active({ a: 4, b: 3 }), new Set(), http({ shared: [5, 1, 10], b_only: [2, 0, 4] }), pairing)).toEqual({ busy: 1, requests: 14 });
  });

  it('counts connections not (yet) in any connection manager as busy: a TCP chain, listener filters', () => {
    const pairing = paired({ mixed: serves(['h']) });
    expect(pairedCounts(active({ mixed: 5 }), new Set(), http({ h: [3, 0, 1] }), pairing)?.busy).toBe(2);
  });

  it('never goes below the requests in flight when the gauges were read mid-change', () => {
    expect(pairedCounts(active({ l: 1 }), new Set(), http({ h: [2, 1, 1] }), paired({ l: serves(['h']) }))?.busy).toBe(1);
  });

  it('counts all as busy: a listener missing from the configuration, an unreadable chain, a manager without stats, a manager shared with an ignored listener', () => {
    const cases: Array<[Pairing, ReadonlySet<string>]> = [
      [paired({}), new Set()],
      [paired({ l: serves(['h'], { unreadable: 'x' }) }), new Set()],
      [paired({ l: serves(['missing']) }), new Set()],
      [paired({ l: serves(['h']), stats: serves(['h']) }), new Set(['stats'])],
    ];
    for (const [pairing, ignored] of cases) {
      expect(pairedCounts(active({ l: 3 }), ignored, http({ h: [3, 0, 9] }), pairing)?.busy).toBe(3);
    }
  });

  it("leaves out requests of managers that serve only ignored listeners (a scraper's)", () => {
    const pairing = paired({ l: serves(['h']), stats: serves(['eg-stats-http']) });
    expect(pairedCounts(active({ l: 1 }), new Set(['stats']), http({ h: [1, 0, 2], 'eg-stats-http': [1, 0, 500] }), pairing)).toEqual({ busy: 0, requests: 2 });
  });

  it('is unknown when a counted listener has no live gauge', () => {
    expect(pairedCounts(active({ l: undefined }), new Set(), http({}), paired({}))).toBeUndefined();
  });
});

describe('ignoredListeners', () => {
  const topology: ListenerTopology = {
    byStatName: new Map([
      ['0.0.0.0_19001', serves(['eg-stats-http'])],
      ['both', serves(['eg-stats-http', 'user'])],
      ['unsure', serves(['eg-stats-http'], { unreadable: 'x' })],
      ['tcp', serves([])],
    ]),
  };
  it('matches stats names exactly, and listeners served only by the given managers', () => {
    const rules = { ignoreListener: new Set(['tenant-1']), ignoreConnectionManagers: new Set(['eg-stats-http']) };
    expect([...ignoredListeners(['0.0.0.0_19001', 'both', 'unsure', 'tcp', 'tenant-1', 'tenant-19001'], rules, topology)]).toEqual([
      '0.0.0.0_19001',
      'tenant-1',
    ]);
    // Never by the listener's name in the configuration: that is not what --ignore-listener names.
    expect([
      ...ignoredListeners(
        ['0.0.0.0_19001'],
        { ignoreListener: new Set(['envoy-gateway-proxy-stats-0.0.0.0-19001']), ignoreConnectionManagers: new Set() },
        topology,
      ),
    ]).toEqual([]);
  });
});

describe('describePairing', () => {
  it('says which managers serve each listener; one that serves none, or cannot be told, as not HTTP', () => {
    expect(describePairing(paired({ l: serves(['h']), t: serves([]), u: serves(['h'], { unreadable: 'x' }) }))).toEqual({
      listeners: { l: { connectionManagers: ['h'] }, t: { connectionManagers: [], notHttp: true }, u: { connectionManagers: ['h'], notHttp: true } },
    });
  });
});
