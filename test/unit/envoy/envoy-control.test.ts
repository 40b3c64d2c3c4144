// Where the drain learns which connection manager serves which listener: from the per-listener HTTP
// stats in the same /stats answer as the counts, so each reading is paired as Envoy is at that
// moment, with one admin call whatever the size of the configuration.
import { describe, expect, it } from 'vitest';
import type { EnvoyAdmin } from '../../../src/envoy/admin-client.js';
import { createEnvoyControl } from '../../../src/envoy/envoy-control.js';

function fakeAdmin(stats: () => ReadonlyArray<{ name: string; value: number }>): EnvoyAdmin & { paths: string[] } {
  const admin = {
    paths: [] as string[],
    post: () => Promise.resolve(''),
    get(path: string): Promise<string> {
      admin.paths.push(path);
      return Promise.resolve(JSON.stringify({ stats: stats() }));
    },
    close: () => Promise.resolve(),
  };
  return admin;
}

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
  it('pairs them from the stats of each reading, in one admin call', async () => {
    let stats = [...listener('0.0.0.0_80', 'ingress', 1), ...manager('ingress', 1, 0)];
    const admin = fakeAdmin(() => stats);
    const envoy = createEnvoyControl(admin, counting);
    const first = await envoy.readConnections();
    expect(first.pairing).toMatchObject({ known: true });
    expect(first.pairing?.known === true && [...first.pairing.topology.byStatName]).toEqual([['0.0.0.0_80', { connectionManagers: new Set(['ingress']) }]]);
    // A listener added while the drain runs is paired at the next reading.
    stats = [...stats, ...listener('0.0.0.0_443', 'tls', 2), ...manager('tls', 2, 1)];
    const second = await envoy.readConnections();
    expect(second.pairing?.known === true && second.pairing.topology.byStatName.get('0.0.0.0_443')).toEqual({ connectionManagers: new Set(['tls']) });
    expect(second.pairing?.key).not.toBe(first.pairing?.key);
    expect(admin.paths.every((path) => path.startsWith('/stats?'))).toBe(true);
    expect(admin.paths).toHaveLength(2);
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
  });
});
