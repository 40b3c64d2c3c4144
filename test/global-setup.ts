// Builds the test fixtures that run as their own processes (test/support/*-main.ts)
// into test/.build/, and fetches the pinned real Envoy and the protocol tests' HTTP/3 client, once
// per test run. The product itself is built by `npm run build`, which `npm test` runs first, so
// tests always exercise the real bundle; the single executable is repackaged from that bundle here
// whenever it is missing or older. The container tests' images
// are built here too (podman's layer cache makes an unchanged rebuild take about 2 s), and whatever
// containers, pods and volumes this run labelled are removed when it ends.

import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import type { TestProject } from 'vitest/node';
import { ensureHey } from './fleet/support/hey.js';
import { buildTestImages } from './image/support/images.js';
import { removeRun } from './image/support/podman-run.js';
import { ensureKubeApiserver, ensureKubeControllerManager } from './support/kube/binary.js';
import { packagePaths } from './support/package/paths.js';
import { prometheusPython } from './support/prometheus.js';
import { aioquicPython } from './support/protocols/h3.js';
import { ensureEnvoyBinary } from './support/real-envoy/binary.js';
import { ensureSyft } from './support/syft.js';
import { ensureSystemPackages } from './support/system-packages.js';

const SUPPORT = 'test/support';

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  if (!existsSync('dist/envoy-shutdown-manager.cjs')) {
    throw new Error('dist/envoy-shutdown-manager.cjs is missing: run `npm test`, which builds first');
  }
  // strip (packaging), podman and runc (containers): installed here on a fresh Debian machine.
  await ensureSystemPackages();
  await packageIfStale();
  await buildFixtures();
  // No fall-back to a stand-in: a missing or mismatched Envoy fails the whole run with its reason.
  await ensureEnvoyBinary();
  // The protocol tests' HTTP/3 client (aioquic, pinned by hash), made once outside the repository.
  await aioquicPython();
  // Prometheus' text-format parser for the /metrics tests (prometheus_client, pinned by hash), made once outside the repository.
  await prometheusPython();
  // No podman, no run: the image, pod and sidecar-less tests fail here with one reason, never skip.
  const images = await buildTestImages((line) => console.log(line));
  // hey, built from its pinned Go module into a cache outside the repository (once per machine).
  project.provide('heyBinary', ensureHey());
  // kube-apiserver and kube-controller-manager, built from their pinned Go module into a cache outside the repository (once per version).
  ensureKubeApiserver((line) => console.log(line));
  ensureKubeControllerManager((line) => console.log(line));
  // syft, for the release's SBOMs: the same, before the release test's time starts.
  await ensureSyft();
  const runId = `${process.pid}${Date.now().toString(36)}`;
  project.provide('managerImage', images.manager);
  project.provide('managerImageTag', images.managerTag);
  project.provide('envoyImage', images.envoy);
  project.provide('managerImageArm64', images.managerArm64);
  project.provide('podmanRunId', runId);
  return async () => {
    const left = await removeRun(runId);
    if (left.length > 0) console.warn(`removed ${left.length} podman objects a test left behind`);
  };
}

/** Bundles every test/support/*-main.ts (processes the tests start, e.g. the drop-in pod) into test/.build/. */
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
