// Envoy's connections as the kernel lists them: /proc/net/tcp and /proc/net/tcp6 of the network
// namespace the pod's containers share. It lives beside stats.ts because it is a second reading of
// the same fact (Envoy's downstream connections), from the kernel instead of the admin API. Pure:
// text in, counts out. A drain uses it only as a hint that a connection closed, never to decide.

/** Socket states as the kernel writes them (include/net/tcp_states.h), in hex. */
const ESTABLISHED = '01';
const CLOSE_WAIT = '08';
const LISTEN = '0A';

/** tcp names the third column `rem_address`, tcp6 `remote_address`. */
const HEADER = /^\s*sl\s+local_address\s+rem(ote)?_address\s+st\s/;
/** `   0: 0100007F:4E1F 00000000:0000 0A ...`: slot, local address:port, remote address:port, state. */
const LINE = /^\s*\d+: ([0-9A-F]+):([0-9A-F]{4}) ([0-9A-F]+:[0-9A-F]{4}) ([0-9A-F]{2}) /;

export interface SocketSummary {
  /** Connections (ESTABLISHED or CLOSE_WAIT) whose local port is a listening port: the server side of each. */
  readonly connections: number;
  /** Changes when that set of connections changes, even at the same count (an order-independent hash). */
  readonly fingerprint: number;
}

/**
 * Counts the server side of every connection in the tables, leaving out `excludePorts` (the admin
 * port: the drain's own reads). A client's socket has an ephemeral local port, not a listening
 * one, so it is never counted. Undefined when a table is not the kernel's format: no guess.
 */
export function summarizeSockets(tables: readonly string[], excludePorts: ReadonlySet<number>): SocketSummary | undefined {
  const listening = new Set<string>();
  const open: Array<{ readonly port: string; readonly key: string }> = [];
  for (const table of tables) {
    const lines = table.split('\n');
    if (!HEADER.test(lines[0] ?? '')) return undefined;
    for (let i = 1; i < lines.length; i += 1) {
      const line = lines[i] as string;
      if (line.trim() === '') continue;
      const match = LINE.exec(line);
      if (match === null) return undefined;
      const [, address, port, remote, state] = match as unknown as [string, string, string, string, string];
      if (state === LISTEN) listening.add(port);
      else if (state === ESTABLISHED || state === CLOSE_WAIT) open.push({ port, key: `${address}:${port} ${remote}` });
    }
  }
  for (const port of excludePorts) listening.delete(port.toString(16).toUpperCase().padStart(4, '0'));
  let connections = 0;
  let fingerprint = 0;
  for (const { port, key } of open) {
    if (!listening.has(port)) continue;
    connections += 1;
    fingerprint = (fingerprint + hash(key)) >>> 0;
  }
  return { connections, fingerprint };
}

/** FNV-1a, 32 bits: enough to tell one small set of connections from the next. */
function hash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}
