// syft, which scripts/release.mjs runs for the release's SBOMs: built once per machine into a cache
// outside the repository by scripts/sbom.mjs, in the background while other tests run
// (./background-build.ts), so the release test's time is its own.
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { type BackgroundBuild, builtFile } from './background-build.js';

interface SbomScript {
  ensureSyft(options?: { log?: (line: string) => void }): string;
  SYFT_BIN: string;
}

async function sbomScript(): Promise<SbomScript> {
  const script = (await import(pathToFileURL(resolve('scripts/sbom.mjs')).href)) as Partial<SbomScript>;
  if (typeof script.ensureSyft !== 'function' || typeof script.SYFT_BIN !== 'string')
    throw new Error('scripts/sbom.mjs no longer exports ensureSyft and SYFT_BIN');
  return { ensureSyft: script.ensureSyft, SYFT_BIN: script.SYFT_BIN };
}

export async function syftBuild(): Promise<BackgroundBuild> {
  return { name: 'syft', target: (await sbomScript()).SYFT_BIN, command: [process.execPath, resolve('scripts/sbom.mjs')] };
}

/** syft's binary: from the cache, after the background build, or built here. */
export async function syftBinary(): Promise<string> {
  const script = await sbomScript();
  return builtFile(script.SYFT_BIN, () => script.ensureSyft({ log: (line) => console.log(line) }));
}
