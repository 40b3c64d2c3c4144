// The few file calls the hand-off files make, as promises over node:fs's callback functions.
// node:fs/promises loads streams, readline and more at its first use: milliseconds of a preStop
// hook's start-up, before its first admin request, for a stat, a write and a rename.
import { close, fstat, open, read, rename, rm, type Stats, type WriteFileOptions, writeFile } from 'node:fs';

type Done<T> = (error: NodeJS.ErrnoException | null, value: T) => void;

function call<T>(run: (done: Done<T>) => void): Promise<T> {
  return new Promise((resolve, reject) => run((error, value) => (error === null ? resolve(value) : reject(error))));
}

export const fsCalls = {
  open: (path: string, flags: number): Promise<number> => call((done) => open(path, flags, done)),
  fstat: (fd: number): Promise<Stats> => call((done) => fstat(fd, done)),
  read: (fd: number, buffer: Buffer, offset: number, length: number, position: number): Promise<number> =>
    call((done) => read(fd, buffer, offset, length, position, done)),
  close: (fd: number): Promise<void> => call<void>((done) => close(fd, (error) => done(error ?? null, undefined))),
  writeFile: (path: string, data: string, options: WriteFileOptions): Promise<void> =>
    call<void>((done) => writeFile(path, data, options, (error) => done(error, undefined))),
  rename: (from: string, to: string): Promise<void> => call<void>((done) => rename(from, to, (error) => done(error, undefined))),
  rm: (path: string, options: { readonly force: boolean }): Promise<void> => call<void>((done) => rm(path, options, (error) => done(error, undefined))),
};
