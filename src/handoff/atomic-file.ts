// Files another process reads while we write them: written to a temporary name in the same
// directory, then renamed, so a reader never sees half a file and a directory watch sees one
// event for the final name.
import { randomBytes } from 'node:crypto';
import { rm, rename, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

export async function writeFileAtomically(path: string, content: string): Promise<void> {
  const temporary = temporaryName(path);
  try {
    await writeFile(temporary, content, { mode: 0o644, flag: 'wx' });
    await rename(temporary, path);
  } catch (error) {
    await rm(temporary, { force: true }).catch(() => undefined);
    throw error;
  }
}

/** A name beside `path` that no other writer will pick. */
export function temporaryName(path: string): string {
  return join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
}
