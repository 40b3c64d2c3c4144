// The ready file: `shutdown` writes it when the drain ends, the manager releases Envoy's preStop
// hook when it appears.
import { rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { writeFileAtomically } from './atomic-file.js';
import { assertWritableDirectory } from './fs-checks.js';
import { ShutdownManagerError, UsageError, errorMessage } from './errors.js';
import { readSmallFile } from './small-file.js';

/** Where the file lives unless --ready-file says otherwise (an emptyDir shared by both containers). */
export const DEFAULT_READY_FILE = '/tmp/shutdown-ready';

export type DrainResult = 'drained' | 'timeout' | 'envoy-unreachable';

/** What the file says about how the drain ended, for the manager's log. */
export interface ReadyReport {
  readonly result: DrainResult;
  /** Connections left when the drain ended; null when unknown (the last read failed, or none succeeded). */
  readonly connections: number | null;
  readonly elapsedMs: number;
  readonly exitCode: number;
  readonly finishedAt: string;
}

/** Fails with a usage error unless a file can be created beside `path` (missing directory, read-only mount). */
export async function checkReadyFileDirectory(path: string): Promise<void> {
  await assertWritableDirectory(dirname(path), 'ready file directory', 'mount a writable emptyDir there or change --ready-file');
}

export async function writeReadyFile(path: string, report: ReadyReport): Promise<void> {
  try {
    await writeFileAtomically(path, `${JSON.stringify(report)}\n`);
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

/** A report is one JSON line of about 130 bytes: nothing larger is read. */
export const MAX_READY_FILE_BYTES = 4 * 1024;

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
