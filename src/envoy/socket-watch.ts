// Reads the kernel's socket tables of the pod's network namespace, bounded, for the drain's hint
// that one of Envoy's connections closed. Any trouble (a missing /proc/net, a table too large to
// read cheaply, a format it does not know) turns the watch off for good: the drain then reads the
// admin API at its regular cadence, as it would without it.
import { closeSync, openSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { errorMessage } from '../shared/errors.js';
import { type SocketSummary, summarizeSockets } from './socket-table.js';

export const DEFAULT_SOCKET_TABLES_DIR = '/proc/net';
/** Where the tables are read from instead (the tests point it at a directory without them). */
export const SOCKET_TABLES_DIR_ENV = 'ENVOY_SHUTDOWN_SOCKET_TABLES_DIR';
/** Above this a table is not read (about 6,000 sockets): the watch turns off rather than cost more. */
export const SOCKET_TABLE_MAX_BYTES = 1024 * 1024;

export interface SocketWatch {
  /** The tables now; undefined once the watch is off (see `offReason`). */
  sample(): SocketSummary | undefined;
  readonly offReason: string | undefined;
}

export function createSocketWatch(dir: string, excludePorts: ReadonlySet<number>): SocketWatch {
  let offReason: string | undefined;
  // Allocated once, lazily: untouched pages of it cost no memory.
  let buffer: Buffer | undefined;
  const read = (name: string, optional: boolean): string | undefined => {
    buffer ??= Buffer.allocUnsafe(SOCKET_TABLE_MAX_BYTES + 1);
    let fd: number;
    try {
      fd = openSync(join(dir, name), 'r');
    } catch (error) {
      // No tcp6 table: IPv6 is off in this kernel, and there is nothing to list.
      if (optional && (error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
    try {
      let length = 0;
      // The kernel hands a table out a page or so per read.
      for (let got = -1; got !== 0 && length < buffer.length; length += got) got = readSync(fd, buffer, length, buffer.length - length, null);
      if (length > SOCKET_TABLE_MAX_BYTES) throw new Error(`${name} is larger than ${SOCKET_TABLE_MAX_BYTES} bytes`);
      return buffer.toString('latin1', 0, length);
    } finally {
      closeSync(fd);
    }
  };
  return {
    sample() {
      if (offReason !== undefined) return undefined;
      try {
        const tables = [read('tcp', false), read('tcp6', true)].filter((table) => table !== undefined);
        const summary = summarizeSockets(tables, excludePorts);
        if (summary === undefined) offReason = 'a socket table is not in the expected format';
        return summary;
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
