// arm64 executables run for real under qemu's user-mode emulation, in a namespace of their own
// (scripts/emulation.mjs says how), with Debian's arm64 libraries from scripts/debian.mjs.
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

interface Scripts {
  readonly sysroot: string;
  readonly inArm64Namespace: (sysroot: string, command: readonly string[]) => string[];
}

let scripts: Scripts | undefined;

async function load(): Promise<Scripts> {
  // Computed specifiers: TypeScript cannot type a .mjs without declarations, so the shapes are checked here.
  const debian = (await import(pathToFileURL(resolve('scripts/debian.mjs')).href)) as { ensureArm64Sysroot?: () => string };
  const emulation = (await import(pathToFileURL(resolve('scripts/emulation.mjs')).href)) as { inArm64Namespace?: Scripts['inArm64Namespace'] };
  if (typeof debian.ensureArm64Sysroot !== 'function' || typeof emulation.inArm64Namespace !== 'function') {
    throw new Error('scripts/debian.mjs or scripts/emulation.mjs no longer exports ensureArm64Sysroot / inArm64Namespace');
  }
  return { sysroot: debian.ensureArm64Sysroot(), inArm64Namespace: emulation.inArm64Namespace };
}

/** The arm64 loader and libraries (scripts/debian.mjs makes them once, outside the repository). */
export async function arm64Sysroot(): Promise<string> {
  scripts ??= await load();
  return scripts.sysroot;
}

/** `command` (x86-64 or arm64 programs) run in the emulation namespace, with the arm64 libraries from `root`. */
export function inArm64Namespace(root: string, command: readonly string[]): string[] {
  if (scripts === undefined) throw new Error('call arm64Sysroot() first');
  return scripts.inArm64Namespace(root, command);
}

/** How to run the arm64 `executable` from `dir` under emulation. */
export function emulatedCommand(root: string, executable: string, dir: string): string[] {
  return inArm64Namespace(root, ['/usr/bin/env', `--chdir=${dir}`, executable]);
}
