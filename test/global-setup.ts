// Builds the test fixtures that run as their own processes (the Envoy and kubelet stand-ins)
// into test/.build/, and fetches the pinned real Envoy, once per test run. The product itself is built by `npm run build`,
// which `npm test` runs first, so tests always exercise the real bundle; the single executable
// is repackaged from that bundle here whenever it is missing or older.
import { build } from 'esbuild';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { packagePaths } from './support/package/paths.js';
import { ensureEnvoyBinary } from './support/real-envoy/binary.js';

const SUPPORT = 'test/support';

export default async function setup(): Promise<void> {
  if (!existsSync('dist/envoy-shutdown-manager.cjs')) {
    throw new Error('dist/envoy-shutdown-manager.cjs is missing: run `npm test`, which builds first');
  }
  await packageIfStale();
  await buildFixtures();
  // No fall-back to a stand-in: a missing or mismatched Envoy fails the whole run with its reason.
  await ensureEnvoyBinary();
}

/** Bundles every test/support/*-main.ts (processes the tests start: the Envoy stand-in) into test/.build/. */
export async function buildFixtures(): Promise<void> {
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

/** Runs `node scripts/package.mjs` (about a second) unless the executable is newer than the bundle. */
async function packageIfStale(): Promise<void> {
  const { BUNDLE, EXECUTABLE } = await packagePaths();
  if (existsSync(EXECUTABLE) && statSync(EXECUTABLE).mtimeMs >= statSync(BUNDLE).mtimeMs) return;
  const result = spawnSync(process.execPath, ['scripts/package.mjs'], { stdio: 'inherit' });
  if (result.status !== 0) throw new Error(`node scripts/package.mjs failed (exit ${result.status ?? result.signal})`);
}
