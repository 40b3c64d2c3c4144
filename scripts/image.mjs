// `npm run image`: builds localhost/envoy-shutdown-manager:<version> with podman, offline, from
// files this project makes: no registry, no base image. The root filesystem comes from
// scripts/image-rootfs.mjs; the runtime stage is the Dockerfile's own last stage, word for word,
// behind a FROM scratch stage that holds the layout where the Dockerfile's build stage leaves it.
//
//   npm run image            # packages the executable first, then builds and prints the image's size
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ROOTFS, RootfsError, managerRootfs } from './image-rootfs.mjs';
import { PodmanError, podman, requirePodman } from './podman.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const IMAGE_NAME = 'localhost/envoy-shutdown-manager';
const EXECUTABLE = join(ROOT, 'dist/envoy-shutdown-manager');
const CONTEXT = join(ROOT, dirname(ROOTFS));

export class ImageError extends Error {}

export function imageTag() {
  return `${IMAGE_NAME}:${JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version}`;
}

/**
 * The Dockerfile's last stage, and the one COPY --from=<stage> <dir>/ / that brings in the root
 * filesystem: the local build puts the layout at <dir> of a stage of that name.
 */
export function runtimeStage(dockerfile) {
  const lines = dockerfile.split('\n');
  const start = lines.findLastIndex((line) => /^FROM\s/i.test(line));
  if (start < 0) throw new ImageError('the Dockerfile has no FROM');
  const text = lines.slice(start).join('\n');
  if (!/^FROM\s+scratch\s*$/i.test(lines[start].trim())) throw new ImageError(`the Dockerfile's runtime stage must be FROM scratch, not "${lines[start]}"`);
  const copies = [...text.matchAll(/^(COPY|ADD)\b.*$/gim)].map((match) => match[0]);
  const rootfs = /^COPY\s+--from=(\S+)\s+(\S+\/)\s+\/$/.exec(copies[0] ?? '');
  if (copies.length !== 1 || rootfs === null) throw new ImageError(`the runtime stage must hold exactly one "COPY --from=<stage> <rootfs>/ /", found: ${copies.join(' | ')}`);
  return { text, stage: rootfs[1], path: rootfs[2] };
}

/** The Containerfile of the local build: the prepared root filesystem, then the Dockerfile's runtime stage. */
export function localContainerfile(dockerfile) {
  const { text, stage, path } = runtimeStage(dockerfile);
  return `# Written by scripts/image.mjs: the root filesystem prepared here stands in for the Dockerfile's build stage.\nFROM scratch AS ${stage}\nCOPY rootfs/ ${path}\n\n${text}`;
}

/** Builds the image (podman's layer cache makes an unchanged rebuild quick); returns its id, tag and size. */
export function buildImage({ log = (line) => console.log(line) } = {}) {
  requirePodman();
  managerRootfs(EXECUTABLE, join(ROOT, ROOTFS));
  mkdirSync(CONTEXT, { recursive: true });
  const containerfile = join(CONTEXT, 'Containerfile');
  writeFileSync(containerfile, localContainerfile(readFileSync(join(ROOT, 'Dockerfile'), 'utf8')));
  const tag = imageTag();
  const started = Date.now();
  const iidfile = join(ROOT, 'dist/image-id');
  podman(['build', '--pull=never', '--network', 'none', '--layers', '--quiet', '--iidfile', iidfile, '-t', tag, '-f', containerfile, CONTEXT], { timeoutMs: 300_000 });
  const id = readFileSync(iidfile, 'utf8').trim();
  const size = Number(podman(['image', 'inspect', '--format', '{{.Size}}', id]).trim());
  log(`${tag}: ${(size / 1e6).toFixed(1)} MB (${id.slice(0, 19)}), built in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return { id, tag, size };
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  try {
    buildImage();
  } catch (error) {
    if (!(error instanceof ImageError || error instanceof PodmanError || error instanceof RootfsError)) throw error;
    console.error(`image: ${error.message}`);
    process.exit(1);
  }
}
