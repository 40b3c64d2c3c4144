// When the drain reads Envoy's listener configuration: at its first count, again only when the
// listener counters move, and never twice after a failure while they stand still.
import { describe, expect, it } from 'vitest';
import type { EnvoyAdmin } from '../../../src/envoy/admin-client.js';
import { createEnvoyControl } from '../../../src/envoy/envoy-control.js';

const HCM = 'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager';

function fakeAdmin(state: { changes: number | undefined; config: string | Error; dynamic?: boolean }): EnvoyAdmin & { configReads: number } {
  const admin = {
    configReads: 0,
    post: () => Promise.resolve(''),
    get(path: string): Promise<string> {
      if (path.startsWith('/config_dump')) {
        admin.configReads += 1;
        return state.config instanceof Error ? Promise.reject(state.config) : Promise.resolve(state.config);
      }
      const stats = [
        { name: 'listener.0.0.0.0_80.downstream_cx_active', value: 1 },
        { name: 'http.ingress.downstream_cx_active', value: 1 },
        { name: 'http.ingress.downstream_rq_active', value: 0 },
        { name: 'http.ingress.downstream_rq_total', value: 1 },
        ...(state.changes === undefined ? [] : [{ name: 'listener_manager.listener_added', value: state.changes }]),
      ];
      return Promise.resolve(JSON.stringify({ stats }));
    },
    close: () => Promise.resolve(),
  };
  return admin;
}

const config = (dynamic = false) => {
  const listener = { name: 'l', address: { socket_address: { address: '0.0.0.0', port_value: 80 } }, filter_chains: [{ filters: [{ name: 'hcm', typed_config: { '@type': HCM, stat_prefix: 'ingress' } }] }] };
  return JSON.stringify({ configs: [dynamic ? { dynamic_listeners: [{ name: 'l', active_state: { listener } }] } : { static_listeners: [{ listener }] }] });
};

const counting = { source: 'listeners', ignore: { listeners: new Set<string>(), connectionManagers: new Set<string>() }, countAccepted: 'no', countRequests: true } as const;

describe('reading the listener configuration', () => {
  it('reads it at the first count and again only when the listener counters move', async () => {
    const state = { changes: 1 as number | undefined, config: config() as string | Error };
    const admin = fakeAdmin(state);
    const envoy = createEnvoyControl(admin, counting);
    expect((await envoy.readConnections()).pairing).toMatchObject({ known: true });
    await envoy.readConnections();
    expect(admin.configReads).toBe(1);
    state.changes = 2;
    await envoy.readConnections();
    expect(admin.configReads).toBe(2);
  });

  it('does not retry a failed read until the listeners change', async () => {
    const state = { changes: 1 as number | undefined, config: new Error('refused') as string | Error };
    const admin = fakeAdmin(state);
    const envoy = createEnvoyControl(admin, counting);
    expect((await envoy.readConnections()).pairing).toEqual({ known: false, why: 'refused' });
    state.config = config();
    expect((await envoy.readConnections()).pairing).toEqual({ known: false, why: 'refused' });
    state.changes = 2;
    expect((await envoy.readConnections()).pairing).toMatchObject({ known: true });
  });

  it('trusts static listeners without the counters, but not listeners from LDS', async () => {
    expect((await createEnvoyControl(fakeAdmin({ changes: undefined, config: config() }), counting).readConnections()).pairing).toMatchObject({ known: true });
    const dynamic = await createEnvoyControl(fakeAdmin({ changes: undefined, config: config(true) }), counting).readConnections();
    expect(dynamic.pairing).toMatchObject({ known: false, why: expect.stringMatching(/LDS/) as unknown });
  });

  it('does not read it when nothing needs the pairing', async () => {
    const admin = fakeAdmin({ changes: 1, config: config() });
    await createEnvoyControl(admin, { ...counting, countRequests: false }).readConnections();
    expect(admin.configReads).toBe(0);
  });
});
