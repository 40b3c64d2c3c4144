// What a bootstrap's listeners are, as the drain sees them: each listener's name, the name Envoy
// gives its stats (`listener.<statName>.*`), and per filter chain what serves it (an HTTP
// connection manager and its stat prefix, `http.<prefix>.*`; a TCP proxy and its `tcp.<prefix>.*`).
import { arrayField, field, isObject, type JsonObject, objectField, stringField } from './proto-json.js';

interface ChainSummary {
  readonly kind: 'http' | 'tcp' | 'other';
  readonly statPrefix?: string;
  readonly serverNames?: readonly string[];
}

export interface ListenerSummary {
  readonly name: string;
  readonly statName: string;
  readonly udp?: true;
  readonly chains: readonly ChainSummary[];
}

export function listenerSummaries(bootstrap: JsonObject): ListenerSummary[] {
  const listeners = arrayField(objectField(bootstrap, 'static_resources') ?? {}, 'listeners').filter(isObject);
  return listeners.map((listener) => {
    const socket = objectField(objectField(listener, 'address') ?? {}, 'socket_address') ?? {};
    const udp = stringField(socket, 'protocol') === 'UDP';
    const chains = [
      ...arrayField(listener, 'filter_chains'),
      ...(isObject(field(listener, 'default_filter_chain')) ? [field(listener, 'default_filter_chain')] : []),
    ]
      .filter(isObject)
      .map(chainSummary);
    return {
      name: stringField(listener, 'name') ?? '',
      statName: stringField(listener, 'stat_prefix') ?? addressStatName(socket),
      ...(udp ? { udp: true as const } : {}),
      chains,
    };
  });
}

/** Envoy's stat name for a socket address: `0.0.0.0_8080`, `[__]_19001` for `::`. */
export function addressStatName(socket: JsonObject): string {
  const address = stringField(socket, 'address') ?? '';
  const port = String(field(socket, 'port_value') ?? '');
  return address.includes(':') ? `[${address.replace(/:/g, '_')}]_${port}` : `${address}_${port}`;
}

function chainSummary(chain: JsonObject): ChainSummary {
  const serverNames = arrayField(objectField(chain, 'filter_chain_match') ?? {}, 'server_names').map(String);
  const filters = arrayField(chain, 'filters').filter(isObject);
  const typedConfig = (filter: JsonObject): JsonObject => objectField(filter, 'typed_config') ?? {};
  const typeOf = (filter: JsonObject): string => String(typedConfig(filter)['@type'] ?? '');
  const hcm = filters.find((f) => typeOf(f).endsWith('.HttpConnectionManager'));
  const tcp = filters.find((f) => typeOf(f).endsWith('.TcpProxy'));
  const served = hcm ?? tcp;
  const statPrefix = served === undefined ? undefined : stringField(typedConfig(served), 'stat_prefix');
  return {
    kind: hcm !== undefined ? 'http' : tcp !== undefined ? 'tcp' : 'other',
    ...(statPrefix === undefined ? {} : { statPrefix }),
    ...(serverNames.length === 0 ? {} : { serverNames }),
  };
}
