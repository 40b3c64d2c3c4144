// Builds the test fixtures that run as their own processes (the Envoy and kubelet stand-ins)
// into test/.build/, once per test run. The product itself is built by `npm run build`,
// which `npm test` runs first, so tests always exercise the real bundle.
import { build } from 'esbuild';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

const SUPPORT = 'test/support';

export default async function setup(): Promise<void> {
  if (!existsSync('dist/envoy-shutdown-manager.cjs')) {
    throw new Error('dist/envoy-shutdown-manager.cjs is missing: run `npm test`, which builds first');
  }
  const entryPoints = readdirSync(SUPPORT)
    .filter((name) => name.endsWith('-main.ts'))
    .map((name) => join(SUPPORT, name));
  if (entryPoints.length === 0) return;
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
