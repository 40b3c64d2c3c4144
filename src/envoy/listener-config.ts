// Which HTTP connection managers serve which listener, read from Envoy's own configuration
// (/config_dump), never guessed from names. Pure: the admin client fetches, these parse. A
// listener's connections are told idle only through this pairing: its stats live under
// `listener.<stat name>.*`, its connection managers' under `http.<stat_prefix>.*`, and the two
// names have nothing in common in the configurations Envoy Gateway and Contour generate.
import { AdminError } from '../shared/errors.js';

/**
 * Only the listeners: the mask keeps the listeners' dump alone (a few KB a listener instead of
 * every cluster, route and secret). The answer is still bounded in size by the caller.
 */
export const LISTENER_CONFIG_PATH = '/config_dump?mask=static_listeners,dynamic_listeners';

const HCM_TYPE = 'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager';

/** What a listener's filter chains end in, across every chain and every version Envoy holds. */
export interface ListenerServes {
  /** The listener's names in the configuration (one stats scope may hold several, e.g. TCP and QUIC on one port). */
  readonly names: readonly string[];
  /** The stat prefixes of the HTTP connection managers its chains end in. */
  readonly connectionManagers: ReadonlySet<string>;
  /** Some chain carries no HTTP connection manager (TCP proxy, TLS passthrough): its connections are always busy. */
  readonly opaque: boolean;
  /** Why some chain's connection manager could not be read; set: the listener's connections are all busy. */
  readonly unreadable?: string;
}

export interface ListenerTopology {
  /** Keyed by the listener's stats scope name: `listener.<key>.downstream_cx_active`. */
  readonly byStatName: ReadonlyMap<string, ListenerServes>;
  /** Listeners from LDS can change while the drain runs; static ones cannot. */
  readonly dynamic: boolean;
}

/**
 * Parses the masked /config_dump. Listeners whose stats scope cannot be named (a pipe or an
 * internal address) are left out: their stats then match no entry, and an unmatched listener is
 * counted as busy by the caller. Anything that is not the dump Envoy sends is an error.
 */
export function parseListenerConfig(body: string): ListenerTopology {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch (error) {
    throw malformed('/config_dump returned a body that is not JSON', error);
  }
  const configs = isRecord(parsed) ? parsed['configs'] : undefined;
  if (!Array.isArray(configs)) throw malformed('/config_dump returned JSON without a "configs" list');
  const byStatName = new Map<string, ListenerServes>();
  let dynamic = false;
  for (const dump of configs) {
    if (!isRecord(dump)) throw malformed('/config_dump has a config that is not an object');
    for (const entry of list(dump['static_listeners'])) add(byStatName, entry['listener']);
    for (const entry of list(dump['dynamic_listeners'])) {
      dynamic = true;
      // The draining version still holds connections, the warming one will: pair them all.
      for (const state of ['active_state', 'warming_state', 'draining_state']) {
        const version = entry[state];
        if (isRecord(version)) add(byStatName, version['listener']);
      }
    }
  }
  return { byStatName, dynamic };
}

function add(byStatName: Map<string, ListenerServes>, listener: unknown): void {
  if (!isRecord(listener)) throw malformed('/config_dump has a listener entry without its listener');
  if (listener['api_listener'] !== undefined) return; // serves no connections
  const name = typeof listener['name'] === 'string' ? listener['name'] : '';
  const statName = listenerStatName(listener);
  if (statName === undefined) return;
  const chains = [...list(listener['filter_chains']), ...(isRecord(listener['default_filter_chain']) ? [listener['default_filter_chain']] : [])];
  const served = chains.map(chainServes);
  const before = byStatName.get(statName);
  const connectionManagers = new Set(before?.connectionManagers);
  for (const chain of served) if (chain.kind === 'http') connectionManagers.add(chain.statPrefix);
  const unreadable = before?.unreadable ?? served.find((chain) => chain.kind === 'unreadable')?.why;
  byStatName.set(statName, {
    names: [...(before?.names ?? []), name],
    connectionManagers,
    opaque: (before?.opaque ?? false) || served.some((chain) => chain.kind === 'opaque'),
    ...(unreadable === undefined ? {} : { unreadable }),
  });
}

type Chain = { readonly kind: 'http'; readonly statPrefix: string } | { readonly kind: 'opaque' } | { readonly kind: 'unreadable'; readonly why: string };

function chainServes(chain: Record<string, unknown>): Chain {
  for (const filter of list(chain['filters'])) {
    const config = filter['typed_config'];
    const name = typeof filter['name'] === 'string' ? filter['name'] : '?';
    if (!isRecord(config)) return { kind: 'unreadable', why: `network filter ${name} has no inline typed_config (discovered elsewhere)` };
    if (config['@type'] !== HCM_TYPE) continue;
    const prefix = config['stat_prefix'];
    if (typeof prefix !== 'string' || prefix === '') return { kind: 'unreadable', why: `connection manager ${name} has no stat_prefix` };
    return { kind: 'http', statPrefix: prefix };
  }
  return { kind: 'opaque' };
}

/**
 * The name of a listener's stats scope, as Envoy makes it: the listener's `stat_prefix`, else its
 * address as Envoy prints it (`0.0.0.0:10080`, `[::]:10080`) with every colon made an underscore.
 * Undefined for an address that is not an IP socket.
 */
export function listenerStatName(listener: Record<string, unknown>): string | undefined {
  const prefix = listener['stat_prefix'];
  if (typeof prefix === 'string' && prefix !== '') return prefix;
  const address = listener['address'];
  const socket = isRecord(address) ? address['socket_address'] : undefined;
  if (!isRecord(socket) || typeof socket['address'] !== 'string') return undefined;
  const port = socket['port_value'] ?? 0;
  if (typeof port !== 'number') return undefined;
  const host = socket['address'];
  if (!host.includes(':')) return `${host}_${port}`;
  // Envoy prints IPv6 in its shortest form, as the URL parser does (RFC 5952).
  let canonical: string;
  try {
    canonical = new URL(`http://[${host}]/`).hostname;
  } catch {
    return undefined;
  }
  return `${canonical}_${port}`.replaceAll(':', '_');
}

function list(value: unknown): Record<string, unknown>[] {
  return Array.isArray(value) ? value.filter(isRecord) : [];
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function malformed(message: string, cause?: unknown): AdminError {
  return new AdminError('ESM_ADMIN_BAD_RESPONSE', message, false, cause === undefined ? undefined : { cause });
}
