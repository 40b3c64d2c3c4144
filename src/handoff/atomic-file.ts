// Files another process reads while we write them: written to a temporary name in the same
// directory, then renamed, so a reader never sees half a file and a directory watch sees one
// event for the final name.
import { renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fsCalls } from './fs-calls.js';

export async function writeFileAtomically(path: string, content: string): Promise<void> {
  const temporary = temporaryName(path);
  try {
    await fsCalls.writeFile(temporary, content, { mode: 0o644, flag: 'wx' });
    await fsCalls.rename(temporary, path);
  } catch (error) {
    await fsCalls.rm(temporary, { force: true }).catch(() => undefined);
    throw error;
  }
}

/**
 * The same, synchronously: for a file written before a hook's first admin request, where each
 * trip through the thread pool only adds to its start-up.
 */
export function writeFileAtomicallySync(path: string, content: string): void {
  const temporary = temporaryName(path);
  try {
    writeFileSync(temporary, content, { mode: 0o644, flag: 'wx' });
    renameSync(temporary, path);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw error;
  }
}

/**
 * A name beside `path` that no other writer will pick, nor a file left by a killed process whose
 * pid came round again. Every writer creates it exclusively ('wx'), so the suffix only has to
 * avoid collisions, not be unguessable: Math.random, because loading node:crypto cost a hook's
 * start-up milliseconds.
 */
export function temporaryName(path: string): string {
  const suffix = Math.floor(Math.random() * 2 ** 32)
    .toString(16)
    .padStart(8, '0');
  return join(dirname(path), `.${basename(path)}.${process.pid}.${suffix}.tmp`);
}
