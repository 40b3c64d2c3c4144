// A reading is one usedonly read of the stats that moved, completed by the last full read while the
// listeners stand still; a full read is made only when a usedonly one cannot tell: no listener stat
// at all, or connections on a listener no pairing stat names.
import { performance } from 'node:perf_hooks';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { type ConnectionCounting, createEnvoyControl } from '../../../src/envoy/envoy-control.js';
import { type FakeAdmin, fakeAdmin } from '../support/fake-admin.js';
import type { FakeStat } from '../support/prometheus-text.js';

/** As Envoy counts its static listeners at start. */
const added = (value = 1): FakeStat => ({ name: 'listener_manager.listener_added', value });
const listener = (name: string, active: number, accepted = active): FakeStat[] => [
  { name: `listener.${name}.downstream_cx_active`, value: active },
  { name: `listener.${name}.downstream_cx_total`, value: accepted },
];
/** The stat that pairs a listener with a connection manager: it moves once a request on it completes. */
const paired = (name: string, manager: string, completed = 0): FakeStat => ({
  name: `listener.${name}.http.${manager}.downstream_rq_completed`,
  value: completed,
});
const manager = (prefix: string, connections: number, inFlight: number, requests: number): FakeStat[] => [
  { name: `http.${prefix}.downstream_cx_active`, value: connections },
  { name: `http.${prefix}.downstream_rq_active`, value: inFlight },
  { name: `http.${prefix}.downstream_rq_total`, value: requests },
];

// Reads take no time unless a test says otherwise: a read priced by the machine's load could send the next one to the text /stats.
let clock = (): number => 0;
beforeEach(() => {
  clock = () => 0;
  vi.spyOn(performance, 'now').mockImplementation(() => clock());
});
afterEach(() => {
  vi.restoreAllMocks();
});

const counting: ConnectionCounting = {
  source: 'listeners',
  ignore: { ignoreListener: new Set(), ignoreConnectionManagers: new Set() },
  countAccepted: 'no',
  countRequests: true,
};

/** The kind of each read: `used` or `full`, in the text /stats as `text used`, `text full`. */
const kinds = (admin: FakeAdmin): string[] =>
  admin.paths.map((path) => `${path.startsWith('/stats?') ? 'text ' : ''}${path.includes('usedonly') ? 'used' : 'full'}`);
const managersOf = (pairing: { topology: { byStatName: ReadonlyMap<string, { connectionManagers: ReadonlySet<string> }> } } | undefined) =>
  Object.fromEntries([...(pairing?.topology.byStatName ?? [])].map(([name, serves]) => [name, [...serves.connectionManagers].sort()]));

describe('readConnections', () => {
  it('pairs listeners with their connection managers from the stats that moved, with no full read while that tells all', async () => {
    const stats = [
      added(),
      ...listener('0.0.0.0_80', 2, 5),
      paired('0.0.0.0_80', 'ingress', 3),
      ...manager('ingress', 2, 1, 4),
      ...listener('0.0.0.0_81', 0, 0),
      paired('0.0.0.0_81', 'other'),
    ];
    const admin = fakeAdmin(() => stats);
    const envoy = createEnvoyControl(admin, counting);
    const first = await envoy.readConnections();
    const second = await envoy.readConnections();
    expect(first.connections).toBe(2);
    expect(managersOf(first.pairing)).toEqual({ '0.0.0.0_80': ['ingress'] });
    expect(first.http).toEqual(new Map([['ingress', { connections: 2, activeRequests: 1, requests: 4 }]]));
    expect(second.pairing?.key).toBe(first.pairing?.key);
    expect(kinds(admin)).toEqual(['used', 'used']);
  });

  it('reads in full, within the same reading, when the stats that moved hold no listener stat: then completes each usedonly read with it', async () => {
    let stats = [added(), ...listener('a', 0), paired('a', 'ingress'), ...listener('tcp', 0), ...manager('ingress', 0, 0, 0)];
    const admin = fakeAdmin(() => stats);
    const envoy = createEnvoyControl(admin, { ...counting, countAccepted: 'required' });
    const first = await envoy.readConnections();
    expect(kinds(admin)).toEqual(['used', 'full']);
    expect(first).toMatchObject({ connections: 0, accepted: 0 });
    expect(managersOf(first.pairing)).toEqual({ a: ['ingress'], tcp: [] });
    stats = [added(), ...listener('a', 1), paired('a', 'ingress'), ...listener('tcp', 0), ...manager('ingress', 1, 0, 0)];
    const second = await envoy.readConnections();
    expect(kinds(admin)).toEqual(['used', 'full', 'used']);
    // The full read's zeros stand for the listener and the pairing stat that did not move.
    expect(second.listeners).toEqual(
      new Map([
        ['a', { active: 1, accepted: 1 }],
        ['tcp', { active: 0, accepted: 0 }],
      ]),
    );
    expect(managersOf(second.pairing)).toEqual(managersOf(first.pairing));
    expect(second.pairing?.key).toBe(first.pairing?.key);
  });

  it('reads in full once when a listener with connections has no pairing stat, and not again while the listeners stand still', async () => {
    let stats = [added(), ...listener('a', 1), paired('a', 'ingress'), ...manager('ingress', 1, 0, 0), ...listener('tcp', 1)];
    const admin = fakeAdmin(() => stats);
    const envoy = createEnvoyControl(admin, counting);
    const first = await envoy.readConnections();
    // Until the full read, nothing tells `a` serves HTTP: its connection counts as busy.
    expect(managersOf(first.pairing)).toEqual({ a: [], tcp: [] });
    const second = await envoy.readConnections();
    expect(managersOf(second.pairing)).toEqual({ a: ['ingress'], tcp: [] });
    await envoy.readConnections();
    await envoy.readConnections();
    // `tcp` serves no HTTP: no full read names a pairing stat for it, and none is read again for it.
    expect(kinds(admin)).toEqual(['used', 'full', 'used', 'used']);
    // A listener changed: the full read no longer stands for the stats left out.
    stats = [added(), { name: 'listener_manager.listener_modified', value: 1 }, ...stats.slice(1)];
    const changed = await envoy.readConnections();
    expect(managersOf(changed.pairing)).toEqual({ a: [], tcp: [] });
    await envoy.readConnections();
    await envoy.readConnections();
    expect(kinds(admin)).toEqual(['used', 'full', 'used', 'used', 'used', 'full', 'used']);
  });

  it('tells a stats_matcher that dropped the listener stats after one full read, and reads no other full one for it', async () => {
    const admin = fakeAdmin(() => [added(), ...manager('ingress', 1, 0, 1)]);
    const envoy = createEnvoyControl(admin, counting);
    await expect(envoy.readConnections()).rejects.toThrow(
      /no listener\.<name>\.downstream_cx_active gauges: if the bootstrap has a stats_config\.stats_matcher/,
    );
    await expect(envoy.readConnections()).rejects.toThrow(/stats_matcher/);
    expect(kinds(admin)).toEqual(['used', 'full', 'used']);
  });

  it('is unknown, never 0, when a listener lacks a stat the quiet period needs', async () => {
    // The gauge moved, its counter did not come: a stats_matcher dropped it.
    const stats = [added(), { name: 'listener.a.downstream_cx_active', value: 2 }];
    await expect(
      createEnvoyControl(
        fakeAdmin(() => stats),
        { ...counting, countAccepted: 'required' },
      ).readConnections(),
    ).rejects.toThrow(/no listener\.a\.downstream_cx_total/);
    const reading = await createEnvoyControl(
      fakeAdmin(() => stats),
      { ...counting, countAccepted: 'if-available' },
    ).readConnections();
    expect(reading.connections).toBe(2);
    expect(reading.accepted).toBeUndefined();
  });

  it('with `total`, counts server.total_connections, with the live listener gauges and the uptime beside it', async () => {
    const stats = [added(), ...listener('a', 2), { name: 'server.total_connections', value: 3 }, { name: 'server.uptime', value: 40 }];
    const admin = fakeAdmin(() => stats);
    const reading = await createEnvoyControl(admin, { ...counting, source: 'total', countRequests: false }).readConnections();
    expect(reading).toMatchObject({ connections: 3, uptimeS: 40, listeners: new Map([['a', { active: 2, accepted: 2 }]]) });
    expect(admin.paths[0]).toMatch(/server\\\.\(total_connections\|uptime\)/);
    // Without any listener stat (a stats_matcher), a report goes on with the total alone.
    const bare = await createEnvoyControl(
      fakeAdmin(() => [added(), { name: 'server.total_connections', value: 3 }]),
      { ...counting, source: 'total', countRequests: false },
    ).readConnections();
    expect(bare).toMatchObject({ connections: 3 });
    expect(bare.listeners).toBeUndefined();
  });

  it('leaves out the listeners served only by the ignored connection managers', async () => {
    const stats = [added(), ...listener('stats', 1), paired('stats', 'eg-stats-http', 9), ...listener('ingress', 2), paired('ingress', 'user', 1)];
    const ignore = { ignoreListener: new Set<string>(), ignoreConnectionManagers: new Set(['eg-stats-http']) };
    const reading = await createEnvoyControl(
      fakeAdmin(() => stats),
      { ...counting, ignore, countRequests: false },
    ).readConnections();
    expect(reading.connections).toBe(2);
    expect(reading.ignored).toEqual(new Set(['stats']));
  });

  it('asks for no per-listener HTTP stats when nothing needs the pairing', async () => {
    const admin = fakeAdmin(() => [added(), ...listener('l', 1), paired('l', 'ingress', 1)]);
    const reading = await createEnvoyControl(admin, { ...counting, countRequests: false }).readConnections();
    expect(reading.pairing).toBeUndefined();
    expect(reading.http).toBeUndefined();
    expect(admin.paths[0]).not.toMatch(/downstream_rq_completed/);
    expect(admin.paths[0]).toMatch(/^\/stats\/prometheus\?usedonly&filter=/);
  });

  it('reads the text /stats from then on when the Prometheus names cannot be read back, and says why', async () => {
    // A listener's stat_prefix with a dot: Envoy's tags take its first word as the address.
    const admin = fakeAdmin(() => [added(), ...listener('team.ingress', 1), paired('team.ingress', 'ingress_http', 1)]);
    const envoy = createEnvoyControl(admin, counting);
    const first = await envoy.readConnections();
    const second = await envoy.readConnections();
    expect(first.connections).toBe(1);
    expect(managersOf(second.pairing)).toEqual({ 'team.ingress': ['ingress_http'] });
    expect(second.read.textBecause).toMatch(/envoy_listener_ingress_downstream_cx_(active|total)\{envoy_listener_address="team"\}.*cannot read back/);
    expect(second.read.path).toMatch(/^\/stats\?usedonly&filter=/);
    expect(kinds(admin)).toEqual(['used', 'text used', 'text used']);
  });
});

describe('nextReadPriceMs', () => {
  it('is what the next read costs Envoy: of the kind the drain will make, 0 before one was made', async () => {
    let stats = [added(), ...listener('a', 0)];
    const admin = fakeAdmin(
      () => stats,
      (path) => (path.includes('usedonly') ? 1 : 3),
    );
    clock = admin.now;
    const envoy = createEnvoyControl(admin, counting);
    expect(envoy.nextReadPriceMs()).toBe(0);
    // A usedonly read with no listener stat, then a full one: the reading cost both.
    expect((await envoy.readConnections()).read.priceMs).toBe(4);
    expect(envoy.nextReadPriceMs()).toBe(1);
    stats = [added(), ...listener('a', 1)];
    expect((await envoy.readConnections()).read.priceMs).toBe(1);
    // `a` has a connection and no pairing stat, and the listeners changed since the full read: a full read is next.
    stats = [added(2), ...listener('a', 1)];
    await envoy.readConnections();
    expect(envoy.nextReadPriceMs()).toBe(3);
  });
});
