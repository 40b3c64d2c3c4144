// Where Envoy's admin API listens. Only loopback or a Unix socket is accepted: the admin API can
// fail health checks, drain and stop Envoy, so it must never be reachable from the network.
import { isIP } from 'node:net';
import { UsageError } from '../shared/errors.js';

export type AdminAddress = { readonly kind: 'tcp'; readonly host: string; readonly port: number } | { readonly kind: 'unix'; readonly path: string };

const FORMS = 'host:port, [v6]:port, http://host:port or unix:/path';

export function parseAdminAddress(text: string): AdminAddress {
  const input = text;
  if (/^\s|\s$/.test(input)) throw new UsageError(`invalid admin address ${JSON.stringify(text)}: leading or trailing white space`);
  if (input.startsWith('unix:')) return unixAddress(input.slice('unix:'.length), text);
  if (input.startsWith('/')) return unixAddress(input, text);
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(input)) return fromUrl(input, text);
  return tcpAddress(input, text);
}

/** The address as a person would type it, for logs and messages. */
export function formatAdminAddress(address: AdminAddress): string {
  if (address.kind === 'unix') {
    return `unix:${address.path.startsWith('\0') ? `@${address.path.slice(1)}` : address.path}`;
  }
  return isIP(address.host) === 6 ? `[${address.host}]:${address.port}` : `${address.host}:${address.port}`;
}

/**
 * Node 20's libuv cuts a socket name at its first NUL byte, so it connects to the empty abstract
 * name, never to Envoy's (measured: refused on 20.20, reached on 24.21).
 */
const ABSTRACT_SOCKET_NODE_MAJOR = 24;

export function reachesAbstractSockets(nodeVersion: string): boolean {
  return Number(nodeVersion.split('.')[0]) >= ABSTRACT_SOCKET_NODE_MAJOR;
}

function unixAddress(path: string, original: string): AdminAddress {
  if (path === '' || path === '@') throw new UsageError(`invalid admin address "${original}": empty socket path`);
  // Envoy spells Linux's abstract namespace with a leading "@"; the kernel wants a NUL byte.
  if (path.startsWith('@')) {
    if (!reachesAbstractSockets(process.versions.node)) {
      throw new UsageError(
        `invalid admin address "${original}": an abstract socket needs Node ${ABSTRACT_SOCKET_NODE_MAJOR} or newer (the single executable's); Node ${process.versions.node} cannot reach Envoy's`,
      );
    }
    return { kind: 'unix', path: `\0${path.slice(1)}` };
  }
  if (!path.startsWith('/')) throw new UsageError(`invalid admin address "${original}": the socket path must be absolute`);
  return { kind: 'unix', path };
}

function fromUrl(input: string, original: string): AdminAddress {
  let url: URL;
  try {
    url = new URL(input);
  } catch {
    throw new UsageError(`invalid admin address "${original}": expected ${FORMS}`);
  }
  if (url.protocol !== 'http:') {
    throw new UsageError(`invalid admin address "${original}": only http:// is supported (Envoy's admin API has no TLS here)`);
  }
  // A bare "#" or "?" leaves hash and search empty: look at the text itself.
  if ((url.pathname !== '/' && url.pathname !== '') || /[?#]/.test(input) || url.username !== '' || url.password !== '') {
    throw new UsageError(`invalid admin address "${original}": give only scheme, host and port`);
  }
  if (url.port === '') throw new UsageError(`invalid admin address "${original}": missing port`);
  return tcpAddress(`${url.hostname}:${url.port}`, original);
}

function tcpAddress(input: string, original: string): AdminAddress {
  const match = /^(?:\[([^\]]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(input);
  if (match === null) {
    const hint = (input.match(/:/g) ?? []).length > 1 ? ' (put IPv6 addresses in brackets: [::1]:19000)' : '';
    throw new UsageError(`invalid admin address "${original}": expected ${FORMS}${hint}`);
  }
  if (match[1] !== undefined && isIP(match[1]) !== 6) {
    throw new UsageError(`invalid admin address "${original}": brackets are for IPv6 addresses only ([::1]:19000, 127.0.0.1:19000)`);
  }
  const port = Number(match[3]);
  if (port < 1 || port > 65_535) throw new UsageError(`invalid admin address "${original}": port must be 1-65535`);
  const host = loopbackHost(match[1] ?? match[2] ?? '', original);
  return { kind: 'tcp', host, port };
}

function loopbackHost(host: string, original: string): string {
  // "localhost" is pinned to IPv4: resolving it can yield ::1 while Envoy binds 127.0.0.1 only
  // (a known trap in Envoy Gateway). Write [::1] to mean IPv6.
  if (host.toLowerCase() === 'localhost') return '127.0.0.1';
  const family = isIP(host);
  if (family === 0) {
    throw new UsageError(`invalid admin address "${original}": use an IP literal (127.0.0.1, [::1]) or localhost, not a host name`);
  }
  if (!isLoopback(host, family)) {
    throw new UsageError(`admin address "${original}" is not loopback: Envoy's admin API must only listen on 127.0.0.1, [::1] or a Unix socket`);
  }
  return host;
}

function isLoopback(host: string, family: number): boolean {
  if (family === 4) return host.startsWith('127.');
  const lower = host.toLowerCase();
  return lower === '::1' || lower === '0:0:0:0:0:0:0:1' || /^::ffff:127\./.test(lower);
}
