// Directories the tool must write into (the ready file's, the install target) are checked before
// any other work, by creating and removing a file: a mode, a read-only mount or SELinux all say no
// the same way.
import { rm, stat, writeFile } from 'node:fs/promises';
import { temporaryName } from './atomic-file.js';
import { UsageError } from '../shared/errors.js';

/** `what` names the directory in messages, e.g. "ready file directory". */
export async function assertWritableDirectory(directory: string, what: string, hint: string): Promise<void> {
  const info = await stat(directory).catch(() => undefined);
  if (info === undefined || !info.isDirectory()) throw new UsageError(`${what} ${directory} does not exist (${hint})`);
  const probe = temporaryName(`${directory}/probe`);
  try {
    await writeFile(probe, '', { flag: 'wx' });
  } catch (error) {
    throw new UsageError(`${what} ${directory} is not writable (${String((error as { code?: unknown }).code)}): ${hint}`);
  }
  await rm(probe, { force: true });
}
