// Reads the kernel's TCP socket counts of the pod's network namespace, bounded, for the drain's
// hint that one of Envoy's connections closed. Any trouble (no /proc/net, a file too large, a
// format it does not know) turns the watch off for good: the drain then reads the admin API at its
// regular cadence, as it would without it.
import { closeSync, openSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { errorMessage } from '../shared/errors.js';
import { type SocketCounts, parseSocketCounts } from './socket-count.js';

export const DEFAULT_SOCKET_COUNTS_DIR = '/proc/net';
/** Each file is a dozen short lines: anything larger is not the kernel's. */
export const SOCKSTAT_MAX_BYTES = 16 * 1024;

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
