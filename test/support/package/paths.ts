// The packaging script's paths, read from scripts/package.mjs itself: the tests, the global setup
// and the Dockerfile check never hold a second copy that could drift.
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

export interface PackagePaths {
  /** The esbuild bundle, relative to the repository root. */
  readonly BUNDLE: string;
  /** The single executable `npm run package` writes, relative to the repository root. */
  readonly EXECUTABLE: string;
  /** The arm64 single executable (`node scripts/package.mjs --arch=arm64`), relative to the repository root. */
  readonly ARM64_EXECUTABLE: string;
}

export async function packagePaths(): Promise<PackagePaths> {
  // A computed specifier: TypeScript cannot type a .mjs without declarations, so the shape is checked here.
  const script = (await import(pathToFileURL(resolve('scripts/package.mjs')).href)) as Partial<PackagePaths>;
  if (typeof script.BUNDLE !== 'string' || typeof script.EXECUTABLE !== 'string' || typeof script.ARM64_EXECUTABLE !== 'string') {
    throw new Error('scripts/package.mjs no longer exports BUNDLE, EXECUTABLE and ARM64_EXECUTABLE');
  }
  return { BUNDLE: script.BUNDLE, EXECUTABLE: script.EXECUTABLE, ARM64_EXECUTABLE: script.ARM64_EXECUTABLE };
}
