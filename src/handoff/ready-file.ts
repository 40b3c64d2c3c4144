// The ready file: `shutdown` writes it when the drain ends, the manager releases Envoy's preStop
// hook when it appears.
import { closeSync, lstatSync, openSync, readSync, rmSync, type Stats } from 'node:fs';
import { dirname } from 'node:path';
import { errorMessage, ShutdownManagerError, UsageError } from '../shared/errors.js';
import { writeFileAtomicallySync } from './atomic-file.js';
import type { DrainResult } from './drain-result.js';
import { assertWritableDirectory } from './fs-checks.js';
import { readSmallFile } from './small-file.js';

/** Where the file lives unless --ready-file says otherwise (an emptyDir shared by both containers). */
export const DEFAULT_READY_FILE = '/tmp/shutdown-ready';

/** What the file says about how the drain ended, for the manager's log. */
export interface ReadyReport {
  readonly result: DrainResult;
  /** Connections left when the drain ended; null when unknown (the last read failed, or none succeeded). */
  readonly connections: number | null;
  readonly elapsedMs: number;
  /**
   * Drained: how far into the drain the read came that began the final run of counts at or under
   * --exit-at-connections (at 0, the last connection closed between it and the read before).
   */
  readonly lastConnectionMs?: number;
  readonly exitCode: number;
  readonly finishedAt: string;
}

/**
 * How long after a drain Envoy was released (`releasedAt`, epoch ms): counted from the read that
 * began the final run of counts at or under the target when the report says when (`lastConnectionMs`),
 * else from the drain's end; undefined when the report's end time is unreadable. Both
 * clocks are the pod's: the drain ended `elapsedMs - lastConnectionMs` after that read.
 */
export function releaseDelay(report: ReadyReport, releasedAt: number): { readonly since: 'last-connection' | 'drain-end'; readonly ms: number } | undefined {
  const endedAt = Date.parse(report.finishedAt);
  if (Number.isNaN(endedAt)) return undefined;
  const ms = (since: number): number => Math.max(0, Math.round(releasedAt - since));
  if (report.lastConnectionMs !== undefined) return { since: 'last-connection', ms: ms(endedAt - (report.elapsedMs - report.lastConnectionMs)) };
  return { since: 'drain-end', ms: ms(endedAt) };
}

/** A report is one JSON line of about 130 bytes: nothing larger is read, nor taken for ours. */
export const MAX_READY_FILE_BYTES = 4 * 1024;

/** Fails with a usage error unless a file can be created beside `path` (missing directory, read-only mount). */
export async function checkReadyFileDirectory(path: string): Promise<void> {
  await assertWritableDirectory(dirname(path), 'ready file directory', 'mount a writable emptyDir there or change --ready-file');
}

/**
 * Fails with a usage error when something other than a ready file this tool wrote sits at the
 * path (a config file given by mistake, a directory, a device, a symlink): it is refused, never
 * replaced or removed. Synchronous, like removeReadyFile, for the manager's start.
 */
export function checkReadyFileReplaceable(path: string): void {
  const refuse = (what: string): UsageError =>
    new UsageError(`--ready-file ${path} ${what}, not a ready file this tool wrote: refusing to replace it (remove it or choose another path)`);
  let info: Stats;
  try {
    info = lstatSync(path);
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ENOENT') return;
    throw new UsageError(`cannot inspect --ready-file ${path} (${String((error as { code?: unknown }).code)})`);
  }
  if (info.isSymbolicLink()) throw refuse('is a symbolic link');
  if (info.isDirectory()) throw refuse('is a directory');
  if (!info.isFile()) throw refuse('is a device, socket or pipe');
  if (info.size > MAX_READY_FILE_BYTES) throw refuse(`holds ${info.size} bytes`);
  const fd = openSync(path, 'r');
  let text: string;
  try {
    const buffer = Buffer.alloc(MAX_READY_FILE_BYTES);
    text = buffer.toString('utf8', 0, readSync(fd, buffer, 0, buffer.length, 0));
  } finally {
    closeSync(fd);
  }
  if (!isReadyReport(text)) throw refuse('holds something else');
}

function isReadyReport(text: string): boolean {
  try {
    const parsed = JSON.parse(text) as Partial<ReadyReport> | null;
    return typeof parsed === 'object' && parsed !== null && typeof parsed.result === 'string' && typeof parsed.elapsedMs === 'number';
  } catch {
    return false;
  }
}

/**
 * Synchronously: the drain is over and the hook has nothing else to do, while each trip through the
 * thread pool (open, write, close, rename) is one more wake-up of this process, on a busy node
 * milliseconds each, before the manager can see the file and release Envoy.
 */
export function writeReadyFile(path: string, report: ReadyReport): void {
  try {
    writeFileAtomicallySync(path, `${JSON.stringify(report)}\n`);
  } catch (error) {
    throw new ShutdownManagerError('ESM_READY_FILE', `could not write the ready file ${path}: ${errorMessage(error)}`, { cause: error });
  }
}

/**
 * Removes a file left by an earlier drain or container; true when there was one. Synchronous so
 * that a caller can do it between binding a port and serving its first request.
 */
export function removeReadyFile(path: string): boolean {
  try {
    rmSync(path);
    return true;
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === 'ENOENT') return false;
    throw new UsageError(`cannot remove the stale ready file ${path} (${String(code)}): it could release Envoy early`);
  }
}

/**
 * The report in the file; undefined when the file is absent; `unreadable` when it is not a report
 * (too large, not a regular file, not JSON). Reads at most MAX_READY_FILE_BYTES, whatever is there.
 */
export async function readReadyReport(path: string): Promise<ReadyReport | 'unreadable' | undefined> {
  const file = await readSmallFile(path, MAX_READY_FILE_BYTES);
  if (file === 'absent') return undefined;
  if (file === 'unusable') return 'unreadable';
  try {
    const parsed = JSON.parse(file.text) as Partial<ReadyReport>;
    return typeof parsed.result === 'string' && typeof parsed.elapsedMs === 'number' ? (parsed as ReadyReport) : 'unreadable';
  } catch {
    return 'unreadable';
  }
}
