// The peers' own HTTPS configuration, grown at test time to the size of a large gateway: the
// committed fixture's TLS filter chain (Envoy Gateway's `https` case, Contour's TLS virtual host)
// copied once per hostname, on as many listeners as asked. Each copy keeps the chain exactly as
// the peer generated it (connection manager and its stat prefix, access log, TLS context, HTTP
// filters) and changes only what makes it one host's: its server name, its route configuration's
// name and domain, and its own name where the peer names chains. The rest of the fixture (the
// stats and readiness listeners, the clusters) is as it was. Nothing of this size is committed.
import { type PeerName, peerFixture } from '../peer-fixtures/fixtures.js';
import { addressStatName } from '../peer-fixtures/listeners.js';
import { arrayField, clone, eachObject, field, isObject, type JsonObject, objectField, setField, stringField } from '../peer-fixtures/proto-json.js';
import type { TestEnvironment } from '../peer-fixtures/static-bootstrap.js';

export interface LargeConfigSize {
  /** HTTPS listeners: the fixture's own, then more on their own ports. */
  readonly listeners: number;
  /** TLS filter chains (hostnames) on each of them. */
  readonly chainsPerListener: number;
}

/** Where each peer keeps its HTTPS listener in the fixture, and how it names more of them. */
interface PeerShape {
  readonly fixture: string;
  readonly listener: string;
  /** The n-th extra listener's name and its connection manager's stat prefix, as the peer names a Gateway listener on that port. */
  readonly extra: (port: number) => { readonly name: string; readonly statPrefix: string };
  /** Route configuration name of one host's chain, as the peer names it. */
  readonly routeName: (listener: string, host: string, index: number) => string;
  /** The chain's own name, for a peer that names chains (Envoy Gateway: after the Gateway listener). */
  readonly chainName?: (listener: string, index: number) => string;
}

const SHAPES: Record<PeerName, PeerShape> = {
  'envoy-gateway': {
    fixture: 'https',
    listener: 'default/eg/https',
    extra: (port) => ({ name: `default/eg/https-${port}`, statPrefix: `https-${port}` }),
    routeName: (listener, _host, index) => `${listener}-${index}`,
    chainName: (listener, index) => `${listener}-${index}`,
  },
  contour: {
    fixture: 'ingress',
    listener: 'ingress_https',
    extra: (port) => ({ name: `https-${port}`, statPrefix: `https-${port}` }),
    routeName: (_listener, host) => `https/${host}`,
  },
};

/** The first extra listener's port; the fixture's own keeps its port (EG 10443, Contour 8443). */
export const FIRST_EXTRA_PORT = 20_000;

/** The hostname of chain `chain` on listener `listener` (both from 0): unique across the bootstrap. */
export function hostname(listener: number, chain: number): string {
  return `h${chain}.l${listener}.example.test`;
}

/** The peer's fixture bootstrap with its HTTPS listener grown to `size` (see the file comment). */
export function largeBootstrap(peer: PeerName, size: LargeConfigSize, env: TestEnvironment): JsonObject {
  if (size.listeners < 1 || size.chainsPerListener < 1) throw new Error(`a size needs at least one listener and one chain: ${JSON.stringify(size)}`);
  const shape = SHAPES[peer];
  const bootstrap = peerFixture(peer, shape.fixture).bootstrap(env);
  const resources = objectField(bootstrap, 'static_resources') ?? {};
  const listeners = arrayField(resources, 'listeners').filter(isObject);
  const index = listeners.findIndex((listener) => stringField(listener, 'name') === shape.listener);
  const original = listeners[index];
  if (original === undefined) throw new Error(`${peer}/${shape.fixture}: no listener ${shape.listener}`);
  const grown = Array.from({ length: size.listeners }, (_, n) => grownListener(original, shape, n, size.chainsPerListener));
  setField(resources, 'listeners', [...listeners.slice(0, index), ...grown, ...listeners.slice(index + 1)]);
  return bootstrap;
}

/** Listener `n` (0: the fixture's own) with one copy of its first TLS HTTP chain per hostname, its other chains (e.g. Contour's passthrough) kept. */
function grownListener(original: JsonObject, shape: PeerShape, n: number, chains: number): JsonObject {
  const listener = clone(original);
  const port = FIRST_EXTRA_PORT + n - 1;
  const renamed = n === 0 ? undefined : shape.extra(port);
  if (renamed !== undefined) {
    setField(listener, 'name', renamed.name);
    const socket = objectField(objectField(listener, 'address') ?? {}, 'socket_address');
    if (socket === undefined) throw new Error(`${shape.listener}: not a socket address`);
    setField(socket, 'port_value', port);
  }
  const name = stringField(listener, 'name') ?? '';
  const all = arrayField(listener, 'filter_chains').filter(isObject);
  const template = all.find(
    (chain) => connectionManager(chain) !== undefined && arrayField(objectField(chain, 'filter_chain_match') ?? {}, 'server_names').length > 0,
  );
  if (template === undefined) throw new Error(`${shape.listener}: no TLS chain with an HTTP connection manager`);
  const copies = Array.from({ length: chains }, (_, i) => hostChain(template, shape, name, hostname(n, i), i, renamed?.statPrefix));
  setField(listener, 'filter_chains', [...copies, ...all.filter((chain) => chain !== template)]);
  return listener;
}

function hostChain(template: JsonObject, shape: PeerShape, listener: string, host: string, index: number, statPrefix: string | undefined): JsonObject {
  const chain = clone(template);
  setField(objectField(chain, 'filter_chain_match') ?? {}, 'server_names', [host]);
  if (shape.chainName !== undefined) setField(chain, 'name', shape.chainName(listener, index));
  const hcm = connectionManager(chain);
  if (hcm === undefined) throw new Error('the template chain lost its connection manager');
  if (statPrefix !== undefined) setField(hcm, 'stat_prefix', statPrefix);
  const route = objectField(hcm, 'route_config');
  if (route === undefined) throw new Error(`${listener}: the chain's routes are not inline`);
  setField(route, 'name', shape.routeName(listener, host, index));
  const hosts = arrayField(route, 'virtual_hosts').filter(isObject);
  for (const virtualHost of hosts) {
    setField(virtualHost, 'domains', [host]);
    setField(virtualHost, 'name', `${stringField(route, 'name') ?? ''}/${host}`);
  }
  return chain;
}

/** The chain's HTTP connection manager config (its typed_config), if it has one. */
export function connectionManager(chain: JsonObject): JsonObject | undefined {
  let found: JsonObject | undefined;
  for (const filter of arrayField(chain, 'filters').filter(isObject)) {
    const config = objectField(filter, 'typed_config');
    if (config !== undefined && String(config['@type'] ?? '').endsWith('.HttpConnectionManager')) found ??= config;
  }
  return found;
}

/**
 * The same bootstrap on loopback: every listener and the admin API on 127.0.0.1 port 0 (the
 * kernel picks; Envoy reports what it bound), for a test outside a private network namespace.
 * Each listener keeps the stat name its fixed address gave it (`listener.0.0.0.0_10443.*`) through
 * its `stat_prefix`: Envoy names a listener's stats after its configured address, so on port 0
 * they would all share `listener.127.0.0.1_0.*`. The admin API goes to `adminPort` (0: the
 * kernel picks), and the clusters that reach it (a stats listener's: EG's `prometheus_stats`,
 * Contour's `envoy-admin`) with it; one on a Unix socket (Contour's /admin/admin.sock, a directory
 * only its pod has) moves to loopback as well.
 */
export function onLoopback(bootstrap: JsonObject, adminPort = 0): JsonObject {
  const copy = clone(bootstrap);
  const admin = objectField(copy, 'admin');
  if (admin !== undefined) {
    const old = JSON.stringify(field(admin, 'address') ?? null);
    const holders = [admin];
    eachObject(arrayField(objectField(copy, 'static_resources') ?? {}, 'clusters'), (object) => {
      if (JSON.stringify(field(object, 'address') ?? null) === old) holders.push(object);
    });
    for (const holder of holders) {
      const socket = objectField(objectField(holder, 'address') ?? {}, 'socket_address');
      if (socket === undefined) setField(holder, 'address', { socket_address: { address: '127.0.0.1', port_value: adminPort } });
      else onLoopbackPort(socket, adminPort);
    }
  }
  const listeners = arrayField(objectField(copy, 'static_resources') ?? {}, 'listeners').filter(isObject);
  for (const listener of listeners) {
    const socket = objectField(objectField(listener, 'address') ?? {}, 'socket_address');
    if (socket !== undefined && stringField(listener, 'stat_prefix') === undefined) setField(listener, 'stat_prefix', addressStatName(socket));
    eachObject(field(listener, 'address') ?? null, (object) => {
      const socket = objectField(object, 'socket_address');
      if (socket !== undefined) onLoopbackPort(socket, 0);
    });
  }
  return copy;
}

/** A socket address moved to 127.0.0.1 `port`, in the spelling it was printed in. */
function onLoopbackPort(socket: JsonObject, port: number): void {
  setField(socket, 'address', '127.0.0.1');
  setField(socket, 'port_value', port);
}
