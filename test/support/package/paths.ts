// The packaging script's paths, read from scripts/package.mjs itself: the tests, the global setup
// and the Dockerfile check never hold a second copy that could drift.
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

export interface PackagePaths {
  /** The esbuild bundle, relative to the repository root. */
  readonly BUNDLE: string;
  /** The single executable `npm run package` writes, relative to the repository root. */
  readonly EXECUTABLE: string;
}

export async function packagePaths(): Promise<PackagePaths> {
  // A computed specifier: TypeScript cannot type a .mjs without declarations, so the shape is checked here.
  const script = (await import(pathToFileURL(resolve('scripts/package.mjs')).href)) as Partial<PackagePaths>;
  if (typeof script.BUNDLE !== 'string' || typeof script.EXECUTABLE !== 'string') {
    throw new Error('scripts/package.mjs no longer exports BUNDLE and EXECUTABLE');
  }
  return { BUNDLE: script.BUNDLE, EXECUTABLE: script.EXECUTABLE };
}
