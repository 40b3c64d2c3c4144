// Reads the Envoy bootstrap the chart renders: its listeners (named by stat prefix, http or tcp
// from their filter chain, health check path) and admin address. `Remap` is how a test pod moves
// fixed ports and absolute paths onto this machine, so tests can run side by side.

interface SocketAddress {
  readonly address: string;
  readonly port_value: number;
}

export interface Address {
  readonly socket_address?: SocketAddress;
  readonly pipe?: { readonly path: string };
}

export interface Filter {
  readonly name: string;
  readonly typed_config?: { readonly '@type'?: string; readonly [field: string]: unknown };
}

export interface Listener {
  readonly name: string;
  readonly stat_prefix?: string;
  readonly drain_type?: string;
  readonly traffic_direction?: string;
  readonly address: Address;
  readonly filter_chains?: ReadonlyArray<{ readonly filters?: readonly Filter[] }>;
}

export interface Cluster {
  readonly name: string;
  readonly load_assignment?: {
    readonly endpoints?: ReadonlyArray<{ readonly lb_endpoints?: ReadonlyArray<{ readonly endpoint?: { readonly address?: Address } }> }>;
  };
}

export interface Bootstrap {
  readonly admin?: { readonly address?: Address };
  readonly static_resources?: { readonly listeners?: readonly Listener[]; readonly clusters?: readonly Cluster[] };
  readonly stats_flush_interval?: string;
  readonly stats_flush_on_admin?: boolean;
}

/** How a fixed port or an absolute path of the pod becomes one of this test run. */
export interface Remap {
  port(port: number): number;
  path(path: string): string;
}

export const IDENTITY: Remap = { port: (port) => port, path: (path) => path };

const HCM = 'envoy.filters.network.http_connection_manager';
const TCP_PROXY = 'envoy.filters.network.tcp_proxy';
const HEALTH_CHECK = 'envoy.filters.http.health_check';

/** Envoy names a listener's stats by its stat_prefix, else by its address: listener.0.0.0.0_8080.*. */
export function statPrefix(listener: Listener): string {
  if (listener.stat_prefix !== undefined) return listener.stat_prefix;
  const socket = listener.address.socket_address;
  if (socket === undefined) throw new Error(`listener ${listener.name} has neither stat_prefix nor a socket address`);
  return `${socket.address}_${socket.port_value}`;
}

export function listeners(bootstrap: Bootstrap): readonly Listener[] {
  return bootstrap.static_resources?.listeners ?? [];
}

/** Every network filter of a listener, whichever filter chain holds it. */
function networkFilters(listener: Listener): Filter[] {
  return (listener.filter_chains ?? []).flatMap((chain) => [...(chain.filters ?? [])]);
}

function isFilter(filter: Filter, name: string, typeSuffix: string): boolean {
  return filter.name === name || (filter.typed_config?.['@type'] ?? '').endsWith(typeSuffix);
}

export function listenerKind(listener: Listener): 'http' | 'tcp' {
  const filters = networkFilters(listener);
  const http = filters.some((f) => isFilter(f, HCM, '.HttpConnectionManager'));
  const tcp = filters.some((f) => isFilter(f, TCP_PROXY, '.TcpProxy'));
  if (http === tcp)
    throw new Error(
      `listener ${listener.name}: expected an HTTP connection manager or a TCP proxy, found ${filters.map((f) => f.name).join(', ') || 'no filter'}`,
    );
  return http ? 'http' : 'tcp';
}

/** The paths Envoy's HTTP health check filters answer on this listener, in filter order. */
export function healthCheckPaths(listener: Listener): string[] {
  const paths = networkFilters(listener).flatMap((filter) => {
    if (!isFilter(filter, HCM, '.HttpConnectionManager')) return [];
    const httpFilters = (filter.typed_config?.http_filters ?? []) as readonly Filter[];
    return httpFilters
      .filter((f) => isFilter(f, HEALTH_CHECK, '.HealthCheck'))
      .map((f) => {
        const config = f.typed_config ?? {};
        if (config.pass_through_mode !== false)
          throw new Error(`listener ${listener.name}: the chart's health check filter runs with pass_through_mode false only`);
        type Header = { name?: string; string_match?: { exact?: string }; exact_match?: string };
        const header = ((config.headers ?? []) as readonly Header[]).find((h) => h.name === ':path');
        const path = header?.string_match?.exact ?? header?.exact_match;
        if (path === undefined) throw new Error(`listener ${listener.name}: health check filter without an exact :path match`);
        return path;
      });
  });
  return paths;
}

/** The HTTP connection manager's `http_protocol_options` of a listener (its first HCM). */
export function httpProtocolOptions(listener: Listener): Record<string, unknown> | undefined {
  const hcm = networkFilters(listener).find((filter) => isFilter(filter, HCM, '.HttpConnectionManager'));
  return hcm?.typed_config?.http_protocol_options as Record<string, unknown> | undefined;
}

/** An Envoy Address as the shutdown binary spells it: unix:/path, host:port or [v6]:port. */
export function addressFlag(address: Address | undefined): string {
  if (address?.pipe !== undefined) return `unix:${address.pipe.path}`;
  const socket = address?.socket_address;
  if (socket === undefined) throw new Error('address has neither pipe nor socket_address');
  return socket.address.includes(':') ? `[${socket.address}]:${socket.port_value}` : `${socket.address}:${socket.port_value}`;
}
