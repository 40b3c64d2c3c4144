// The Debian packages the run needs (strip, podman, runc, haproxy), installed by scripts/debian.mjs when
// missing: the global setup goes through here so `npm test` is the only set-up.
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

export async function ensureSystemPackages(): Promise<void> {
  // A computed specifier: TypeScript cannot type a .mjs without declarations, so the shape is checked here.
  const script = (await import(pathToFileURL(resolve('scripts/debian.mjs')).href)) as { ensureDebianPackages?: () => string[] };
  if (typeof script.ensureDebianPackages !== 'function') throw new Error('scripts/debian.mjs no longer exports ensureDebianPackages');
  script.ensureDebianPackages();
}
