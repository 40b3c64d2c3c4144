// How many TCP sockets the pod's network namespace holds, as the kernel counts them in
// /proc/net/sockstat and sockstat6 (`TCP: inuse N`). It lives beside stats.ts because it is a
// second, coarser reading of the same fact (Envoy's connections), from the kernel instead of the
// admin API. Pure: text in, counts out. A drain uses it only as a hint that a connection closed,
// never to decide: it counts every TCP socket of the namespace, Envoy's upstream connections and
// listeners included.
//
// Why the count and not the socket tables (/proc/net/tcp): each read of a table walks the kernel's
// whole established-connection hash, shared by every network namespace of the node (measured: about
// 5 ms of CPU per read with 262,144 buckets, however few sockets the namespace has). The count is a
// per-namespace counter: about 20 µs per read.

/** The `inuse` counts of one reading: IPv4 and IPv6 sockets apart, so a close of one and an open of the other still show. */
export interface SocketCounts {
  readonly tcp: number;
  readonly tcp6: number;
}

/**
 * `sockstat`: /proc/net/sockstat; `sockstat6`: /proc/net/sockstat6, undefined when the kernel has
 * no IPv6 (then there are no IPv6 sockets). Undefined when a file is not the kernel's format: no guess.
 */
export function parseSocketCounts(sockstat: string, sockstat6: string | undefined): SocketCounts | undefined {
  const tcp = inUse(sockstat, 'TCP');
  const tcp6 = sockstat6 === undefined ? 0 : inUse(sockstat6, 'TCP6');
  return tcp === undefined || tcp6 === undefined ? undefined : { tcp, tcp6 };
}

/** Some socket closed since `before`: fewer IPv4 or fewer IPv6 sockets (an open elsewhere does not hide it). */
export function fewerSockets(now: SocketCounts, before: SocketCounts): boolean {
  return now.tcp < before.tcp || now.tcp6 < before.tcp6;
}

function inUse(text: string, protocol: 'TCP' | 'TCP6'): number | undefined {
  // `TCP: inuse 12 orphan 0 tw 3 alloc 14 mem 1`: one line per protocol, `inuse` first.
  const lines = text.split('\n').filter((line) => line.startsWith(`${protocol}: `));
  if (lines.length !== 1) return undefined;
  const match = /^TCP6?: inuse (\d{1,9})(?: |$)/.exec(lines[0] as string);
  return match === null ? undefined : Number(match[1]);
}
