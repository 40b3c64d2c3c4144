// Directories the tool must write into (the ready file's, the install target) are checked before
// any other work, by creating and removing a file: a mode, a read-only mount or SELinux all say no
// the same way.
import { rmSync, type Stats, statSync, writeFileSync } from 'node:fs';
import { UsageError } from '../shared/errors.js';
import { temporaryName } from './atomic-file.js';

/**
 * `what` names the directory in messages, e.g. "ready file directory". Synchronous calls: a check
 * at start-up, before anything is served, where each trip through the thread pool only delays the
 * first admin request.
 */
export async function assertWritableDirectory(directory: string, what: string, hint: string): Promise<void> {
  const info = statOrUndefined(directory);
  if (info === undefined || !info.isDirectory()) throw new UsageError(`${what} ${directory} does not exist (${hint})`);
  const probe = temporaryName(`${directory}/probe`);
  try {
    writeFileSync(probe, '', { flag: 'wx' });
  } catch (error) {
    throw new UsageError(`${what} ${directory} is not writable (${String((error as { code?: unknown }).code)}): ${hint}`);
  }
  rmSync(probe, { force: true });
}

function statOrUndefined(path: string): Stats | undefined {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
}
