// Where the drain learns which connection manager serves which listener: from the per-listener HTTP
// stats read with the counts, so each reading is paired as Envoy is at that moment, with one admin
// call per reading whatever the size of the configuration: a full read of the Prometheus endpoint
// first, then reads of the stats that moved, until the listeners change.
import { describe, expect, it } from 'vitest';
import type { EnvoyAdmin } from '../../../src/envoy/admin-client.js';
import { createEnvoyControl } from '../../../src/envoy/envoy-control.js';
import { type FakeStat, prometheusText } from '../support/prometheus-text.js';

function fakeAdmin(stats: () => readonly FakeStat[]): EnvoyAdmin & { paths: string[] } {
  const admin = {
    paths: [] as string[],
    post: () => Promise.resolve(''),
    get(path: string): Promise<string> {
      admin.paths.push(path);
      if (path.startsWith('/stats/prometheus?')) return Promise.resolve(prometheusText(stats(), path.includes('usedonly')));
      return Promise.resolve(JSON.stringify({ stats: stats().map(({ name, value }) => ({ name, value })) }));
    },
    close: () => Promise.resolve(),
  };
  return admin;
}

/** The kind of each read: a full one, one of the stats that moved, or the JSON /stats. */
const kinds = (paths: readonly string[]): string[] => paths.map((path) => (path.startsWith('/stats?') ? 'json' : path.includes('usedonly') ? 'used' : 'full'));

/** As Envoy counts its static listeners at start: without it, every read is a full one. */
const ADDED = { name: 'listener_manager.listener_added', value: 1 };
const listener = (name: string, manager: string | undefined, active: number) => [
  { name: `listener.${name}.downstream_cx_active`, value: active },
  ...(manager === undefined ? [] : [{ name: `listener.${name}.http.${manager}.downstream_rq_completed`, value: 0 }]),
];
const manager = (prefix: string, connections: number, inFlight: number) => [
  { name: `http.${prefix}.downstream_cx_active`, value: connections },
  { name: `http.${prefix}.downstream_rq_active`, value: inFlight },
  { name: `http.${prefix}.downstream_rq_total`, value: 1 },
];

const counting = { source: 'listeners', ignore: { listeners: new Set<string>(), connectionManagers: new Set<string>() }, countAccepted: 'no', countRequests: true } as const;

describe('pairing listeners with connection managers', () => {
  it('pairs them from a full read, then reads only the stats that moved, and reads in full again when a listener is added', async () => {
    let stats: FakeStat[] = [ADDED, ...listener('0.0.0.0_80', 'ingress', 1), ...manager('ingress', 1, 0)];
    const admin = fakeAdmin(() => stats);
    const envoy = createEnvoyControl(admin, counting);
    const first = await envoy.readConnections();
    expect(first.pairing).toMatchObject({ known: true });
    expect(first.pairing?.known === true && [...first.pairing.topology.byStatName]).toEqual([['0.0.0.0_80', { connectionManagers: new Set(['ingress']) }]]);
    const second = await envoy.readConnections();
    expect(second.pairing?.key).toBe(first.pairing?.key);
    expect(second.connections).toBe(1);
    // A listener added while the drain runs is paired at the next reading.
    stats = [...stats, ...listener('0.0.0.0_443', 'tls', 2), ...manager('tls', 2, 1)];
    const third = await envoy.readConnections();
    expect(third.pairing?.known === true && third.pairing.topology.byStatName.get('0.0.0.0_443')).toEqual({ connectionManagers: new Set(['tls']) });
    expect(third.pairing?.key).not.toBe(first.pairing?.key);
    expect(third.connections).toBe(3);
    expect(kinds(admin.paths)).toEqual(['full', 'used', 'used', 'full']);
  });

  it("says what each read cost Envoy at most, from the number of series the full read named, whatever the node's load", async () => {
    const stats = [ADDED, ...Array.from({ length: 1_000 }, (_, n) => listener(`l${n}`, 'ingress', n === 0 ? 1 : 0)).flat(), ...manager('ingress', 1, 0)];
    const envoy = createEnvoyControl(fakeAdmin(() => stats), counting);
    const full = await envoy.readConnections();
    const used = await envoy.readConnections();
    expect(full.envoyCostMs).toBeCloseTo(stats.length * 0.02);
    expect(used.envoyCostMs).toBeCloseTo(stats.length * 0.0015);
  });

  it('reads a stat the full read saw and a usedonly read leaves out as 0', async () => {
    const admin = fakeAdmin(() => [ADDED, ...listener('a', 'ingress', 2), ...listener('b', 'ingress', 0), ...manager('ingress', 2, 0), ...manager('idle', 0, 0)]);
    const envoy = createEnvoyControl(admin, counting);
    await envoy.readConnections();
    const reading = await envoy.readConnections();
    expect(reading.connections).toBe(2);
    expect(reading.listeners?.get('b')).toEqual({ active: 0, accepted: undefined });
    expect(reading.http?.get('idle')).toEqual({ connections: 0, activeRequests: 0, requests: 1 });
    expect(kinds(admin.paths)).toEqual(['full', 'used']);
    expect(admin.paths[1]).not.toBe(admin.paths[0]);
  });

  it('reads in full again when a stat that was not 0 is missing, or the listener manager updated a listener', async () => {
    let stats: FakeStat[] = [ADDED, ...listener('a', 'ingress', 1), ...manager('ingress', 1, 0)];
    const admin = fakeAdmin(() => stats);
    const envoy = createEnvoyControl(admin, counting);
    await envoy.readConnections();
    // A stat that moved stays in every usedonly answer while it lives: missing, it was made anew (at 0).
    stats = stats.map((stat) => (stat.name === 'listener.a.downstream_cx_active' ? { ...stat, value: 0, used: false } : stat));
    await envoy.readConnections();
    stats = [...stats, { name: 'listener_manager.listener_in_place_updated', value: 1 }];
    await envoy.readConnections();
    await envoy.readConnections();
    // Not in the first full read, the update counter is a stat the full read did not have; then it is, and it stands still.
    expect(kinds(admin.paths)).toEqual(['full', 'used', 'full', 'used', 'full', 'used']);
  });

  it('reads the same stats with the same values as the last time as the same reading (the admin API\'s own moving), and changed ones anew', async () => {
    let active = 1;
    let adminRequests = 0;
    const admin = fakeAdmin(() => [ADDED, ...listener('a', 'ingress', active), ...manager('ingress', active, 0), { name: 'http.admin.downstream_rq_total', value: (adminRequests += 1) }]);
    const envoy = createEnvoyControl(admin, counting);
    await envoy.readConnections();
    const second = await envoy.readConnections();
    const third = await envoy.readConnections();
    expect(third).toBe(second);
    active = 0;
    const fourth = await envoy.readConnections();
    expect(fourth.connections).toBe(0);
    expect(fourth).not.toBe(second);
  });

  it('never takes a failed reading for the last one: the same answer again fails again', async () => {
    const bad = [ADDED, { name: 'listener.a.downstream_cx_total', value: 4 }];
    let stats: FakeStat[] = [ADDED, ...listener('a', 'ingress', 1)];
    const envoy = createEnvoyControl(fakeAdmin(() => stats), { ...counting, countRequests: false });
    await envoy.readConnections();
    await envoy.readConnections();
    stats = bad;
    await expect(envoy.readConnections()).rejects.toThrow(/no listener\.a\.downstream_cx_active gauge/);
    await expect(envoy.readConnections()).rejects.toThrow(/no listener\.a\.downstream_cx_active gauge/);
  });

  it('reads every time in full when a stats matcher drops the update counters: a changed listener could go unseen', async () => {
    const admin = fakeAdmin(() => [...listener('a', 'ingress', 1), ...manager('ingress', 1, 0)]);
    const envoy = createEnvoyControl(admin, counting);
    await envoy.readConnections();
    await envoy.readConnections();
    expect(kinds(admin.paths)).toEqual(['full', 'full']);
  });

  it('reads the JSON /stats from then on when the Prometheus names cannot be read back, and says why', async () => {
    const admin = fakeAdmin(() => [...listener('a', 'ingress', 1), ...manager('ingress', 1, 0)]);
    const customName: EnvoyAdmin['get'] = (path, ...rest) =>
      path.startsWith('/stats/prometheus?') ? (admin.paths.push(path), Promise.resolve('envoy_listener_name_downstream_cx_active{envoy_listener_address="custom"} 1\n')) : admin.get(path, ...rest);
    const envoy = createEnvoyControl({ ...admin, get: customName }, counting);
    const first = await envoy.readConnections();
    const second = await envoy.readConnections();
    expect(first.connections).toBe(1);
    expect(second.jsonBecause).toMatch(/envoy_listener_name_downstream_cx_active\{envoy_listener_address="custom"\}.*cannot turn back/);
    expect(kinds(admin.paths)).toEqual(['full', 'json', 'json']);
  });

  it('is unknown, never guessed, when /stats has connection managers but no per-listener names (a stats matcher)', async () => {
    const reading = await createEnvoyControl(fakeAdmin(() => [...listener('l', undefined, 1), ...manager('ingress', 1, 0)]), counting).readConnections();
    expect(reading.pairing).toMatchObject({ known: false, why: expect.stringMatching(/stats_matcher/) as unknown });
  });

  it('asks for no per-listener stats when nothing needs the pairing', async () => {
    const admin = fakeAdmin(() => listener('l', 'ingress', 1));
    const reading = await createEnvoyControl(admin, { ...counting, countRequests: false }).readConnections();
    expect(reading.pairing).toBeUndefined();
    expect(admin.paths[0]).not.toMatch(/downstream_rq_completed/);
    expect(admin.paths[0]).toMatch(/^\/stats\/prometheus\?filter=/);
  });
});
