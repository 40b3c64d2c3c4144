// Reading a small file another process wrote (the ready file, the drain marker), in bounded
// memory and time: whatever sits at the path, a 50 MB file, a FIFO or a device, costs at most
// `maxBytes` and never blocks.
import { constants } from 'node:fs';
import { fsCalls } from './fs-calls.js';

export type SmallFile = { readonly text: string } | 'absent' | 'unusable';

/** `unusable`: not a regular file, larger than `maxBytes`, or unreadable. */
export async function readSmallFile(path: string, maxBytes: number): Promise<SmallFile> {
  let fd: number;
  try {
    // O_NONBLOCK: opening a FIFO with no writer would otherwise wait forever.
    fd = await fsCalls.open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    return (error as { code?: unknown }).code === 'ENOENT' ? 'absent' : 'unusable';
  }
  try {
    if (!(await fsCalls.fstat(fd)).isFile()) return 'unusable';
    const buffer = Buffer.alloc(maxBytes + 1);
    let size = 0;
    for (;;) {
      const bytesRead = await fsCalls.read(fd, buffer, size, buffer.length - size, size);
      if (bytesRead === 0) break;
      size += bytesRead;
      if (size > maxBytes) return 'unusable';
    }
    return { text: buffer.toString('utf8', 0, size) };
  } catch {
    return 'unusable';
  } finally {
    await fsCalls.close(fd).catch(() => undefined);
  }
}
