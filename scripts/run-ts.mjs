// Runs a TypeScript entry point (the demo, a benchmark) without a TypeScript runtime: esbuild
// bundles it to a temporary CommonJS file, which node then runs with the remaining arguments.

import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { build } from 'esbuild';

const [entry, ...args] = process.argv.slice(2);
if (entry === undefined) {
  console.error('usage: node scripts/run-ts.mjs <file.ts> [args...]');
  process.exit(2);
}
const outdir = join('test', '.build', 'run');
mkdirSync(outdir, { recursive: true });
const outfile = join(outdir, `${basename(entry, '.ts')}.cjs`);
// esbuild stays external: it is loaded from node_modules, not bundled into itself.
await build({ entryPoints: [entry], outfile, bundle: true, platform: 'node', format: 'cjs', target: 'node20', external: ['esbuild'], logLevel: 'warning' });
const result = spawnSync(process.execPath, [outfile, ...args], { stdio: 'inherit' });
process.exit(result.status ?? 1);
