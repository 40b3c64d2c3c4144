// The images the container tests run, built once per test run by the global setup: the project's
// image exactly as `npm run image` builds it, and an Envoy image for the pod: the pinned real Envoy
// in a FROM scratch image with its loader and libraries (found as `install` finds the manager's),
// the same passwd, and nothing else. It is a different image from the manager's on purpose: the
// sidecar-less test runs the installed copy inside it.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { findRuntimeFiles } from '../../../src/install/libraries.js';
import { ensureEnvoyBinary, envoyVersion } from '../real-envoy/binary.js';
import { podman } from './podman-run.js';
import { imageScripts } from './scripts.js';

const ENVOY_IMAGE_NAME = 'localhost/envoy-shutdown-manager-test-envoy';
/** Where the Envoy image keeps its binary, as the chart's Envoy command names it. */
const ENVOY_IN_IMAGE = '/usr/local/bin/envoy';
const CONTEXT = resolve('test/.build/envoy-image');

export interface BuiltImages {
  readonly manager: string;
  readonly managerTag: string;
  readonly managerSize: number;
  readonly envoy: string;
  /** The arm64 image, built the same way from the arm64 executable. */
  readonly managerArm64: string;
}

export async function buildTestImages(log: (line: string) => void): Promise<BuiltImages> {
  const { image, rootfs, podman: script } = await imageScripts();
  script.requirePodman();
  const manager = await image.buildImage({ log });
  const managerArm64 = await image.buildImage({ arch: 'arm64', log });
  const envoy = await buildEnvoyImage(rootfs.layoutRootfs, rootfs.elfInterpreter);
  return { manager: manager.id, managerTag: manager.tag, managerSize: manager.size, envoy, managerArm64: managerArm64.id };
}

/** The project's amd64 image and the Envoy image, without the arm64 one (the benchmarks' pods). */
export async function buildAmd64Images(log: (line: string) => void): Promise<Pick<BuiltImages, 'manager' | 'managerTag' | 'envoy'>> {
  const { image, rootfs, podman: script } = await imageScripts();
  script.requirePodman();
  const manager = await image.buildImage({ log });
  return { manager: manager.id, managerTag: manager.tag, envoy: await buildEnvoyImage(rootfs.layoutRootfs, rootfs.elfInterpreter) };
}

async function buildEnvoyImage(
  layoutRootfs: Awaited<ReturnType<typeof imageScripts>>['rootfs']['layoutRootfs'],
  elfInterpreter: (path: string) => string,
): Promise<string> {
  const binary = await ensureEnvoyBinary();
  const runtime = await findRuntimeFiles(binary);
  layoutRootfs(join(CONTEXT, 'rootfs'), {
    binaries: [{ from: binary, to: ENVOY_IN_IMAGE }],
    libraries: new Map([...runtime.libraries].filter(([soname]) => soname !== runtime.loader.name)),
    loader: runtime.loader,
    interpreter: elfInterpreter(binary),
  });
  mkdirSync(CONTEXT, { recursive: true });
  const containerfile = join(CONTEXT, 'Containerfile');
  writeFileSync(containerfile, `FROM scratch\nCOPY rootfs/ /\nUSER 65532:65532\nENTRYPOINT ["${ENVOY_IN_IMAGE}"]\n`);
  const tag = `${ENVOY_IMAGE_NAME}:${await envoyVersion()}`;
  const iidfile = join(CONTEXT, '..', 'envoy-image-id');
  await podman(['build', '--pull=never', '--network', 'none', '--layers', '--quiet', '--iidfile', iidfile, '-t', tag, '-f', containerfile, CONTEXT], 300_000);
  return readFileSync(iidfile, 'utf8').trim();
}
