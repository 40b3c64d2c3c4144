// Finds the dynamic loader and every shared library an executable needs, transitively, the way
// the loader itself would look for them, from the ELF files on this system: nothing guessed.
import { open, realpath, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { ElfError } from '../shared/errors.js';
import { type ElfDependencies, EM_AARCH64, EM_X86_64, readElfDependencies } from './elf.js';

/** The loader's default search path on Debian-style systems (distroless included), by ELF machine. */
const DEFAULT_LIBRARY_DIRS: ReadonlyMap<number, readonly string[]> = new Map([
  [EM_X86_64, ['/lib/x86_64-linux-gnu', '/usr/lib/x86_64-linux-gnu', '/lib64', '/usr/lib64', '/lib', '/usr/lib']],
  [EM_AARCH64, ['/lib/aarch64-linux-gnu', '/usr/lib/aarch64-linux-gnu', '/lib64', '/usr/lib64', '/lib', '/usr/lib']],
]);

export interface RuntimeFiles {
  /** The loader as the executable names it (PT_INTERP) and the real file behind it. */
  readonly loader: { readonly name: string; readonly path: string };
  /** soname → real file, every library needed directly or through another library. */
  readonly libraries: ReadonlyMap<string, string>;
}

async function elfDependencies(path: string): Promise<ElfDependencies> {
  const handle = await open(path, 'r');
  try {
    return await readElfDependencies(async (offset, length) => {
      const buffer = Buffer.alloc(length);
      const { bytesRead } = await handle.read(buffer, 0, length, offset);
      return buffer.subarray(0, bytesRead);
    });
  } finally {
    await handle.close();
  }
}

export async function findRuntimeFiles(executable: string, searchDirs?: readonly string[]): Promise<RuntimeFiles> {
  const root = await elfDependencies(executable);
  if (root.interpreter === undefined) throw new ElfError(`${executable} names no dynamic loader (PT_INTERP): it cannot be run through one`);
  const dirs = searchDirs ?? DEFAULT_LIBRARY_DIRS.get(root.machine);
  if (dirs === undefined) throw new ElfError(`${executable} is neither an x86-64 nor an arm64 executable`);
  const libraries = new Map<string, string>();
  const pending: Array<{ soname: string; from: string; runpath: string | undefined }> = root.needed.map((soname) => ({
    soname,
    from: executable,
    runpath: root.runpath,
  }));
  for (let entry = pending.shift(); entry !== undefined; entry = pending.shift()) {
    const { soname, from, runpath } = entry;
    if (libraries.has(soname)) continue;
    const found = await locate(soname, root.machine, expandRunpath(runpath, from), dirs);
    libraries.set(soname, found);
    const deps = await elfDependencies(found);
    for (const next of deps.needed) pending.push({ soname: next, from: found, runpath: deps.runpath });
  }
  return { loader: { name: root.interpreter.split('/').at(-1) ?? root.interpreter, path: await realpath(root.interpreter) }, libraries };
}

async function locate(soname: string, machine: number, runpathDirs: readonly string[], searchDirs: readonly string[]): Promise<string> {
  for (const dir of [...runpathDirs, ...searchDirs]) {
    const candidate = join(dir, soname);
    const info = await stat(candidate).catch(() => undefined);
    // The loader skips files of the wrong class or machine; so do we.
    if (
      info?.isFile() === true &&
      (await elfDependencies(candidate).then(
        (d) => d.machine === machine,
        () => false,
      ))
    ) {
      return realpath(candidate);
    }
  }
  throw new ElfError(`cannot find ${soname} in ${[...runpathDirs, ...searchDirs].join(', ')}`);
}

function expandRunpath(runpath: string | undefined, from: string): string[] {
  if (runpath === undefined || runpath === '') return [];
  return runpath.split(':').map((dir) => dir.replace(/\$(ORIGIN|\{ORIGIN\})/g, dirname(from)));
}
