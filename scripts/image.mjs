// `npm run image`: builds localhost/envoy-shutdown-manager:<version> with podman, offline, from
// files this project makes: no registry, no base image. The root filesystem comes from
// scripts/image-rootfs.mjs; the runtime stage is the Dockerfile's own last stage, word for word,
// behind a FROM scratch stage that holds the layout where the Dockerfile's build stage leaves it.
//
// The arm64 image is built the same way from the arm64 executable, its root filesystem laid out
// under emulation (its own `install` finds its loader and libraries: Debian's arm64 packages);
// `--arch=all` then joins both into one OCI image index with `podman manifest`.
//
//   npm run image                     # packages the executable first, then builds and prints the image's size
//   node scripts/image.mjs --arch=all # both images (after node scripts/package.mjs --arch=all) and their index
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { managerRootfs, ROOTFS, RootfsError } from './image-rootfs.mjs';
import { PodmanError, podman, requirePodman } from './podman.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const IMAGE_NAME = 'localhost/envoy-shutdown-manager';

/**
 * Each platform (OCI architecture name): the executable the image holds and the build context
 * its root filesystem is laid out in. The amd64 image keeps the plain version tag.
 */
export const PLATFORMS = {
  amd64: { executable: 'dist/envoy-shutdown-manager', context: dirname(ROOTFS), tagSuffix: '' },
  arm64: { executable: 'dist/linux-arm64/envoy-shutdown-manager', context: 'dist/image-arm64', tagSuffix: '-arm64' },
};

export class ImageError extends Error {}

function version() {
  return JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version;
}

export function imageTag(arch = 'amd64') {
  return `${IMAGE_NAME}:${version()}${PLATFORMS[arch].tagSuffix}`;
}

/** The local name of the image index (a manifest list) that holds both platforms' images. */
export function indexTag() {
  return `${IMAGE_NAME}:${version()}-index`;
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
  if (copies.length !== 1 || rootfs === null)
    throw new ImageError(`the runtime stage must hold exactly one "COPY --from=<stage> <rootfs>/ /", found: ${copies.join(' | ')}`);
  return { text, stage: rootfs[1], path: rootfs[2] };
}

/** The Containerfile of the local build: the prepared root filesystem, then the Dockerfile's runtime stage. */
export function localContainerfile(dockerfile) {
  const { text, stage, path } = runtimeStage(dockerfile);
  return `# Written by scripts/image.mjs: the root filesystem prepared here stands in for the Dockerfile's build stage.\nFROM scratch AS ${stage}\nCOPY rootfs/ ${path}\n\n${text}`;
}

/**
 * Builds one platform's image (podman's layer cache makes an unchanged rebuild quick); returns its
 * id, tag and size. `timestamp` (seconds since the epoch) makes the build reproducible: podman then
 * gives every file and the image that time.
 */
export async function buildImage({ arch = 'amd64', timestamp, noCache = false, log = (line) => console.log(line) } = {}) {
  requirePodman();
  const platform = PLATFORMS[arch];
  if (platform === undefined) throw new ImageError(`no image for ${arch}: one of ${Object.keys(PLATFORMS).join(', ')}`);
  const executable = join(ROOT, platform.executable);
  if (!existsSync(executable))
    throw new ImageError(`${platform.executable} is missing: run node scripts/package.mjs --arch=${arch === 'amd64' ? 'x64' : arch}`);
  const context = join(ROOT, platform.context);
  await layOutOnce(executable, join(context, 'rootfs'), arch);
  const containerfile = join(context, 'Containerfile');
  writeFileSync(containerfile, localContainerfile(readFileSync(join(ROOT, 'Dockerfile'), 'utf8')));
  const tag = imageTag(arch);
  const started = Date.now();
  const iidfile = join(context, 'image-id');
  const reproducible = timestamp === undefined ? [] : ['--timestamp', String(timestamp)];
  // A layer from the cache keeps the time it was made at: a reproducible build makes every layer anew.
  const cache = noCache ? ['--no-cache'] : ['--layers'];
  podman(
    [
      'build',
      '--pull=never',
      '--network',
      'none',
      ...cache,
      '--quiet',
      '--platform',
      `linux/${arch}`,
      ...reproducible,
      '--iidfile',
      iidfile,
      '-t',
      tag,
      '-f',
      containerfile,
      context,
    ],
    { timeoutMs: 300_000 },
  );
  const id = readFileSync(iidfile, 'utf8').trim();
  const size = Number(podman(['image', 'inspect', '--format', '{{.Size}}', id]).trim());
  log(`${tag}: ${(size / 1e6).toFixed(1)} MB (${id.slice(0, 19)}, linux/${arch}), built in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return { id, tag, size };
}

/** Both platforms' images, then the index holding them (made anew each time); returns the index's name and the images. */
export async function buildIndex({ timestamp, noCache = false, log = (line) => console.log(line) } = {}) {
  const images = {};
  for (const arch of Object.keys(PLATFORMS)) images[arch] = await buildImage({ arch, timestamp, noCache, log });
  const name = indexTag();
  try {
    podman(['manifest', 'rm', name]);
  } catch {
    // none yet
  }
  podman(['manifest', 'create', name]);
  for (const arch of Object.keys(PLATFORMS))
    podman(['manifest', 'add', '--os', 'linux', '--arch', arch, name, `containers-storage:${images[arch].id.replace(/^sha256:/, '')}`]);
  log(
    `${name}: index of ${Object.keys(PLATFORMS)
      .map((arch) => `linux/${arch}`)
      .join(', ')}`,
  );
  return { name, images };
}

/**
 * Lays out the root filesystem unless the one there was made from this very executable (and, for
 * arm64, these libraries): the arm64 `install` under emulation takes tens of seconds.
 */
async function layOutOnce(executable, into, arch) {
  const emulate = arch === 'amd64' ? undefined : await emulation();
  // The layout's own code is part of its source: a change to it lays the directory out again.
  const source = `${sha256(executable)} ${sha256(join(ROOT, 'scripts/image-rootfs.mjs'))} ${emulate?.sysroot ?? 'host'}\n`;
  const stamp = `${into}.source`;
  if (existsSync(into) && existsSync(stamp) && readFileSync(stamp, 'utf8') === source) return;
  managerRootfs(executable, into, { emulate: emulate?.wrap, system: emulate?.sysroot });
  writeFileSync(stamp, source);
}

/** Debian's arm64 libraries and the emulation namespace (imported here only: the Dockerfile copies neither script). */
async function emulation() {
  const { ensureArm64Sysroot } = await import('./debian.mjs');
  const { inArm64Namespace } = await import('./emulation.mjs');
  const sysroot = ensureArm64Sysroot();
  return { sysroot, wrap: (command) => inArm64Namespace(sysroot, command) };
}

function sha256(path) {
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  try {
    const { values } = parseArgs({ options: { arch: { type: 'string', default: 'amd64' } }, strict: true });
    if (values.arch === 'all') await buildIndex();
    else await buildImage({ arch: values.arch });
  } catch (error) {
    if (!(error instanceof ImageError || error instanceof PodmanError || error instanceof RootfsError)) throw error;
    console.error(`image: ${error.message}`);
    process.exit(1);
  }
}
