// Global set-up of every project that runs the product against real Envoy: the Debian packages
// (strip, podman, runc, haproxy, …), the single executables repackaged when older than the bundle
// (`npm test` builds the bundle first, so tests exercise the real one), the fixtures that run as
// their own processes (test/support/*-main.ts, bundled into test/.build/), the pinned real Envoy and
// the Python clients (aioquic for HTTP/3, prometheus_client's parser). Each step is quick once its
// cache is warm; several projects list this file, and it runs once per test run.
import { spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { buildFixtures } from '../support/fixtures.js';
import { packagePaths } from '../support/package/paths.js';
import { prometheusPython } from '../support/prometheus.js';
import { aioquicPython } from '../support/protocols/h3.js';
import { ensureEnvoyBinary } from '../support/real-envoy/binary.js';
import { ensureSystemPackages } from '../support/system-packages.js';

const onceKey = Symbol.for('esm.product-setup');
const globals = globalThis as { [onceKey]?: Promise<void> };

export default async function setup(): Promise<void> {
  globals[onceKey] ??= prepare();
  await globals[onceKey];
}

async function prepare(): Promise<void> {
  if (!existsSync('dist/envoy-shutdown-manager.cjs')) throw new Error('dist/envoy-shutdown-manager.cjs is missing: run `npm test`, which builds first');
  await ensureSystemPackages();
  await packageIfStale();
  await buildFixtures();
  // No fall-back to a stand-in: a missing or mismatched Envoy fails the whole run with its reason.
  await ensureEnvoyBinary();
  await aioquicPython();
  await prometheusPython();
}

/** Runs `node scripts/package.mjs` (a few seconds per architecture) for each executable older than the bundle. */
export async function packageIfStale(): Promise<void> {
  const { BUNDLE, EXECUTABLE, ARM64_EXECUTABLE } = await packagePaths();
  const stale = (path: string): boolean => !existsSync(path) || statSync(path).mtimeMs < statSync(BUNDLE).mtimeMs;
  for (const [arch, executable] of [
    ['x64', EXECUTABLE],
    ['arm64', ARM64_EXECUTABLE],
  ] as const) {
    if (!stale(executable)) continue;
    const result = spawnSync(process.execPath, ['scripts/package.mjs', `--arch=${arch}`], { stdio: 'inherit' });
    if (result.status !== 0) throw new Error(`node scripts/package.mjs --arch=${arch} failed (exit ${result.status ?? result.signal})`);
  }
}
