// The Debian packages the run needs (strip, podman, runc, haproxy, qemu), installed by
// scripts/debian.mjs when missing, and the arm64 libraries the emulated tests use: the global setup
// goes through here so `npm test` is the only set-up.
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

export async function ensureSystemPackages(): Promise<void> {
  // A computed specifier: TypeScript cannot type a .mjs without declarations, so the shape is checked here.
  const script = (await import(pathToFileURL(resolve('scripts/debian.mjs')).href)) as { ensureDebianPackages?: () => string[]; ensureArm64Sysroot?: () => string };
  if (typeof script.ensureDebianPackages !== 'function' || typeof script.ensureArm64Sysroot !== 'function') {
    throw new Error('scripts/debian.mjs no longer exports ensureDebianPackages and ensureArm64Sysroot');
  }
  script.ensureDebianPackages();
  script.ensureArm64Sysroot();
}
