// The chart's bootstrap as one test pod runs it on this machine: every address of the pod itself
// (admin API, listeners, clusters that point back into the pod) goes through the pod's remap, so
// fixed ports become the pod's free ports and socket paths land in its emptyDir directories;
// 0.0.0.0 and :: become loopback. Addresses elsewhere (a cluster's DNS name) stay as they are.
import type { Address, Bootstrap, Remap } from '../chart/bootstrap.js';

const LOOPBACK: Readonly<Record<string, string>> = { '0.0.0.0': '127.0.0.1', '127.0.0.1': '127.0.0.1', '::': '::1', '::1': '::1', localhost: '127.0.0.1' };

function isAddress(value: object): value is Address {
  return 'socket_address' in value || 'pipe' in value;
}

function remapAddress(address: Address, remap: Remap): Address {
  if (address.pipe !== undefined) return { ...address, pipe: { ...address.pipe, path: remap.path(address.pipe.path) } };
  const socket = address.socket_address;
  const local = socket === undefined ? undefined : LOOPBACK[socket.address];
  if (socket === undefined || local === undefined) return address;
  return { ...address, socket_address: { ...socket, address: local, port_value: remap.port(socket.port_value) } };
}

function walk(value: unknown, remap: Remap): unknown {
  if (Array.isArray(value)) return value.map((item) => walk(item, remap));
  if (value === null || typeof value !== 'object') return value;
  if (isAddress(value)) return remapAddress(value, remap);
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, walk(item, remap)]));
}

export function remapBootstrap(bootstrap: Bootstrap, remap: Remap): Bootstrap {
  return walk(bootstrap, remap) as Bootstrap;
}

/** Envoy's rendered arguments with `--config-path` pointing at `configPath`. */
export function withConfigPath(args: readonly string[], configPath: string): string[] {
  const at = args.indexOf('--config-path');
  if (at < 0 || at + 1 >= args.length) throw new Error(`Envoy's rendered args have no --config-path: ${args.join(' ')}`);
  return [...args.slice(0, at + 1), configPath, ...args.slice(at + 2)];
}
