import { describe, expect, it } from 'vitest';
import { listenerStatName, parseListenerConfig } from '../../../src/envoy/listener-config.js';

const HCM = 'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager';
const hcm = (prefix: string) => ({ name: 'envoy.filters.network.http_connection_manager', typed_config: { '@type': HCM, stat_prefix: prefix, route_config: {} } });
const tcp = { name: 'envoy.filters.network.tcp_proxy', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy', stat_prefix: 'tp', cluster: 'c' } };
const at = (address: string, port: number) => ({ socket_address: { address, port_value: port } });
const dump = (staticListeners: object[], dynamicListeners: object[] = []) =>
  JSON.stringify({ configs: [{ '@type': 'type.googleapis.com/envoy.admin.v3.ListenersConfigDump', static_listeners: staticListeners.map((listener) => ({ listener })), dynamic_listeners: dynamicListeners }] });

describe('listenerStatName', () => {
  it.each([
    [{ stat_prefix: 'ingress', address: at('0.0.0.0', 80) }, 'ingress'],
    [{ stat_prefix: '', address: at('0.0.0.0', 10080) }, '0.0.0.0_10080'],
    [{ address: at('::', 10080) }, '[__]_10080'],
    [{ address: at('0:0:0:0:0:0:0:1', 19001) }, '[__1]_19001'],
    [{ address: at('2001:DB8:0:0::1', 443) }, '[2001_db8__1]_443'],
    [{ address: { pipe: { path: '/tmp/l.sock' } } }, undefined],
    [{ address: { envoy_internal_address: { server_listener_name: 'x' } } }, undefined],
  ])('%j -> %s', (listener, name) => {
    expect(listenerStatName(listener)).toBe(name);
  });
});

describe('parseListenerConfig', () => {
  it('pairs each listener with the connection managers of every chain, the default chain included, whatever the names', () => {
    const topology = parseListenerConfig(
      dump([
        { name: 'default/eg/http', address: at('0.0.0.0', 10080), filter_chains: [{ filters: [hcm('http-10080')] }] },
        { name: 'ingress_https', address: at('0.0.0.0', 8443), filter_chains: [{ filter_chain_match: { server_names: ['a'] }, filters: [hcm('https')] }, { filters: [tcp] }] },
        { name: 'v6', address: at('::', 8080), default_filter_chain: { filters: [{ name: 'envoy.filters.network.rbac', typed_config: { '@type': 'rbac' } }, hcm('v6_http')] } },
        { name: 'api', api_listener: {} },
      ]),
    );
    expect(topology.dynamic).toBe(false);
    expect(Object.fromEntries([...topology.byStatName].map(([name, serves]) => [name, { ...serves, connectionManagers: [...serves.connectionManagers] }]))).toEqual({
      '0.0.0.0_10080': { names: ['default/eg/http'], connectionManagers: ['http-10080'], opaque: false },
      '0.0.0.0_8443': { names: ['ingress_https'], connectionManagers: ['https'], opaque: true },
      '[__]_8080': { names: ['v6'], connectionManagers: ['v6_http'], opaque: false },
    });
  });

  it('merges the versions of a dynamic listener (active, warming, draining) and listeners sharing a stats name', () => {
    const version = (prefix: string) => ({ listener: { name: 'l', address: at('0.0.0.0', 80), filter_chains: [{ filters: [hcm(prefix)] }] } });
    const topology = parseListenerConfig(
      dump([{ name: 'quic', address: { socket_address: { address: '0.0.0.0', port_value: 80, protocol: 'UDP' } }, filter_chains: [{ filters: [hcm('h3')] }] }], [
        { name: 'l', active_state: version('new'), draining_state: version('old') },
      ]),
    );
    expect(topology.dynamic).toBe(true);
    expect([...(topology.byStatName.get('0.0.0.0_80')?.connectionManagers ?? [])].sort()).toEqual(['h3', 'new', 'old']);
    expect(topology.byStatName.get('0.0.0.0_80')?.names).toEqual(['quic', 'l', 'l']);
  });

  it('marks a chain whose connection manager cannot be read (discovered elsewhere, no stat prefix)', () => {
    const topology = parseListenerConfig(
      dump([
        { name: 'ecds', address: at('0.0.0.0', 1), filter_chains: [{ filters: [{ name: 'hcm', config_discovery: { config_source: {} } }] }] },
        { name: 'noprefix', address: at('0.0.0.0', 2), filter_chains: [{ filters: [{ name: 'hcm', typed_config: { '@type': HCM } }] }] },
      ]),
    );
    expect(topology.byStatName.get('0.0.0.0_1')?.unreadable).toMatch(/no inline typed_config/);
    expect(topology.byStatName.get('0.0.0.0_2')?.unreadable).toMatch(/no stat_prefix/);
  });

  it.each([
    ['not JSON', 'upstream connect error', /not JSON/],
    ['no configs', '{"stats":[]}', /without a "configs" list/],
    ['a config that is not an object', '{"configs":[1]}', /not an object/],
    ['an entry without its listener', JSON.stringify({ configs: [{ static_listeners: [{ last_updated: 'x' }] }] }), /without its listener/],
  ])('refuses %s', (_what, body, error) => {
    expect(() => parseListenerConfig(body)).toThrow(error);
  });
});
