// syft (scripts/sbom.mjs builds it once per machine into a cache outside the repository), built
// by the global setup so the release test's time is its own.
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

export async function ensureSyft(): Promise<string> {
  const script = (await import(pathToFileURL(resolve('scripts/sbom.mjs')).href)) as { ensureSyft?: (options?: { log?: (line: string) => void }) => string };
  if (typeof script.ensureSyft !== 'function') throw new Error('scripts/sbom.mjs no longer exports ensureSyft');
  return script.ensureSyft({ log: (line) => console.log(line) });
}
