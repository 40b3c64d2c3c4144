// The processes the tests, the demo and the benchmarks start from this harness (test/support/*-main.ts:
// the drop-in pod, the fleet runner, the network-namespace bridge, …), bundled into test/.build/.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';

const SUPPORT = 'test/support';

/** Bundles every test/support/*-main.ts into test/.build/<name>.cjs (esbuild: well under a second). */
export async function buildFixtures(): Promise<void> {
  const entryPoints = readdirSync(SUPPORT)
    .filter((name) => name.endsWith('-main.ts'))
    .map((name) => join(SUPPORT, name));
  await build({
    entryPoints,
    outdir: 'test/.build',
    outExtension: { '.js': '.cjs' },
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    logLevel: 'warning',
  });
}
