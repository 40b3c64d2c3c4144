// How many TCP sockets the pod's network namespace holds, as the kernel counts them in
// /proc/net/sockstat and sockstat6 (`TCP: inuse N`): a second, coarser reading of Envoy's
// connections, free to read. A drain uses it only as a hint that a connection closed, never to
// decide: it counts every TCP socket of the namespace, Envoy's upstream connections and listeners
// included. Any trouble (no /proc/net, a file too large, a format it does not know) turns the
// watch off for good: the drain then reads the admin API at its regular pace.
//
// Why the count and not the socket tables (/proc/net/tcp): each read of a table walks the kernel's
// whole established-connection hash, shared by every network namespace of the node (measured: about
// 5 ms of CPU per read with 262,144 buckets, however few sockets the namespace has). The count is a
// per-namespace counter: about 20 µs per read.
import { closeSync, openSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { errorMessage } from '../shared/errors.js';

/**
 * One reading: the sockets in use, IPv4 and IPv6 apart (a close of one and an open of the other
 * still show), and those in TIME_WAIT, which one more means a close this side began (Envoy's
 * `Connection: close` after a response), even when a new connection took the old one's place.
 */
export interface SocketCounts {
  readonly tcp: number;
  readonly tcp6: number;
  readonly timeWait: number;
}

/**
 * `sockstat`: /proc/net/sockstat; `sockstat6`: /proc/net/sockstat6, undefined when the kernel has
 * no IPv6 (then there are no IPv6 sockets). Undefined when a file is not the kernel's format: no guess.
 */
export function parseSocketCounts(sockstat: string, sockstat6: string | undefined): SocketCounts | undefined {
  // `TCP: inuse 12 orphan 0 tw 3 alloc 14 mem 1` (TIME_WAIT counts both families); `TCP6: inuse 2`.
  const tcp = /^TCP: inuse (\d{1,9}) .*\btw (\d{1,9})(?: |$)/.exec(onlyLine(sockstat, 'TCP') ?? '');
  const tcp6 = sockstat6 === undefined ? ['', '0'] : /^TCP6: inuse (\d{1,9})(?: |$)/.exec(onlyLine(sockstat6, 'TCP6') ?? '');
  if (tcp === null || tcp6 === null) return undefined;
  return { tcp: Number(tcp[1]), tcp6: Number(tcp6[1]), timeWait: Number(tcp[2]) };
}

/** Some socket closed since `before`: fewer in use in either family, or one more in TIME_WAIT. */
export function socketClosed(now: SocketCounts, before: SocketCounts): boolean {
  return now.tcp < before.tcp || now.tcp6 < before.tcp6 || now.timeWait > before.timeWait;
}

function onlyLine(text: string, protocol: 'TCP' | 'TCP6'): string | undefined {
  const lines = text.split('\n').filter((line) => line.startsWith(`${protocol}: `));
  return lines.length === 1 ? lines[0] : undefined;
}

export const DEFAULT_SOCKET_COUNTS_DIR = '/proc/net';
/** Each file is a dozen short lines: anything larger is not the kernel's. */
const SOCKSTAT_MAX_BYTES = 16 * 1024;

export interface SocketWatch {
  /** The counts now; undefined once the watch is off (see `offReason`). */
  sample(): SocketCounts | undefined;
  readonly offReason: string | undefined;
}

export function createSocketWatch(dir: string): SocketWatch {
  let offReason: string | undefined;
  const buffer = Buffer.allocUnsafe(SOCKSTAT_MAX_BYTES + 1);
  const read = (name: string, optional: boolean): string | undefined => {
    let fd: number;
    try {
      fd = openSync(join(dir, name), 'r');
    } catch (error) {
      // No sockstat6: IPv6 is off in this kernel, and there are no IPv6 sockets to count.
      if (optional && (error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
    try {
      let length = 0;
      for (let got = -1; got !== 0 && length < buffer.length; length += got) got = readSync(fd, buffer, length, buffer.length - length, null);
      if (length > SOCKSTAT_MAX_BYTES) throw new Error(`${name} is larger than ${SOCKSTAT_MAX_BYTES} bytes`);
      return buffer.toString('latin1', 0, length);
    } finally {
      closeSync(fd);
    }
  };
  return {
    sample() {
      if (offReason !== undefined) return undefined;
      try {
        const counts = parseSocketCounts(read('sockstat', false) as string, read('sockstat6', true));
        if (counts === undefined) offReason = 'sockstat is not in the expected format';
        return counts;
      } catch (error) {
        offReason = errorMessage(error);
        return undefined;
      }
    },
    get offReason() {
      return offReason;
    },
  };
}
