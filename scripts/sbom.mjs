// The release's SBOMs: one CycloneDX JSON document per platform image in the OCI archive, written by
// syft (Anchore's SBOM generator), built from its Go module with the ordinary Go client at a pinned
// version (the Go checksum database verifies the module) into a cache outside the repository, once.
//
// One SBOM per platform, not one for the index: the two images hold different files (each its own
// executable, loader and libraries from its own architecture's Debian packages) and a node pulls
// one of them; syft reads one image at a time, chosen in the index by --platform.
//
// syft writes a random serialNumber and the time it ran into each document. Both are replaced so
// two releases of one commit give the same bytes: the timestamp by the release's time (the
// commit's, or SOURCE_DATE_EPOCH), the serial number by a UUID derived from the image's manifest
// digest and the syft version, so a new image or generator gives a new one and nothing else does.
//
//   node scripts/sbom.mjs          # builds syft when the cache has none, prints its path
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

export const SYFT_MODULE = 'github.com/anchore/syft/cmd/syft';
export const SYFT_VERSION = 'v1.57.1';
/** Outside the repository, by version: a new pin builds anew. */
export const SYFT_DIR = join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'esm-syft', SYFT_VERSION);
export const SYFT_BIN = join(SYFT_DIR, 'syft');
/** A cold build compiles about 1,500 packages: minutes on two busy cores. */
const BUILD_TIMEOUT_MS = 1_800_000;

export class SbomError extends Error {}

/** Builds syft when the cache has none (niced: it takes both cores for minutes); throws one clear line when Go is missing or the build fails. */
export function ensureSyft({ log = (line) => process.stderr.write(`${line}\n`) } = {}) {
  if (existsSync(SYFT_BIN)) return SYFT_BIN;
  const go = spawnSync('go', ['version'], { encoding: 'utf8' });
  if (go.error !== undefined || go.status !== 0)
    throw new SbomError(`go is not installed: the release's SBOM is made by ${SYFT_MODULE}@${SYFT_VERSION}, built with it (${go.error?.message ?? go.stderr})`);
  log(`building ${SYFT_MODULE}@${SYFT_VERSION} into ${SYFT_DIR} (once per machine; minutes when Go's caches are cold)`);
  const started = Date.now();
  // syft's own releases stamp their version at link time; without it the SBOMs would name "[not provided]".
  const ldflags = `-X main.version=${SYFT_VERSION.replace(/^v/, '')}`;
  const result = spawnSync('nice', ['-n', '10', 'go', 'install', `-ldflags=${ldflags}`, `${SYFT_MODULE}@${SYFT_VERSION}`], {
    encoding: 'utf8',
    env: { ...process.env, GOBIN: SYFT_DIR, CGO_ENABLED: '0', GOFLAGS: '-trimpath' },
    timeout: BUILD_TIMEOUT_MS,
  });
  if (result.status !== 0 || !existsSync(SYFT_BIN))
    throw new SbomError(
      `go install ${SYFT_MODULE}@${SYFT_VERSION} failed (${result.error?.message ?? `exit ${result.status}`}): ${(result.stderr ?? '').slice(-1_000)}`,
    );
  log(`${SYFT_BIN}: built in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  return SYFT_BIN;
}

/** The SBOM's file name for one platform of the release. */
export function sbomName(version, arch) {
  return `envoy-shutdown-manager-${version}-linux-${arch}.cdx.json`;
}

/**
 * Writes `file`: syft's CycloneDX JSON SBOM of the linux/`arch` image in the OCI archive, named
 * `name` `version`, with its timestamp and serial number fixed (see above). `tmp` is where syft
 * unpacks the archive; `manifestDigest` is the platform image's digest in the index.
 */
export function writeSbom({ syft, archive, arch, name, version, manifestDigest, epoch, file, tmp }) {
  const result = spawnSync(
    syft,
    [
      'scan',
      `oci-archive:${archive}`,
      '--platform',
      `linux/${arch}`,
      '--source-name',
      name,
      '--source-version',
      version,
      '--output',
      'cyclonedx-json',
      '--quiet',
    ],
    // No update check, no network: the archive is all it reads.
    { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024, timeout: 600_000, env: { ...process.env, TMPDIR: tmp, SYFT_CHECK_FOR_APP_UPDATE: 'false' } },
  );
  if (result.status !== 0)
    throw new SbomError(`syft scan of linux/${arch} failed (${result.error?.message ?? `exit ${result.status}`}): ${(result.stderr ?? '').slice(-1_000)}`);
  let bom;
  try {
    bom = JSON.parse(result.stdout);
  } catch (error) {
    throw new SbomError(`syft wrote no JSON for linux/${arch}: ${error.message}`);
  }
  writeFileSync(file, `${JSON.stringify(reproducibleBom(bom, { manifestDigest, epoch }), null, 2)}\n`);
}

/** The document with syft's run-dependent fields replaced: serial number from the image digest and syft's version, timestamp the release's. */
export function reproducibleBom(bom, { manifestDigest, epoch }) {
  if (bom?.bomFormat !== 'CycloneDX' || typeof bom.serialNumber !== 'string' || typeof bom.metadata?.timestamp !== 'string') {
    throw new SbomError('syft wrote no CycloneDX document with a serialNumber and a metadata.timestamp');
  }
  return {
    ...bom,
    serialNumber: `urn:uuid:${derivedUuid(`${manifestDigest} ${SYFT_MODULE}@${SYFT_VERSION}`)}`,
    metadata: { ...bom.metadata, timestamp: new Date(epoch * 1000).toISOString().replace(/\.000Z$/, 'Z') },
  };
}

/** A name-based UUID (RFC 9562 version 8, SHA-256 of `name`): the same name, the same UUID. */
export function derivedUuid(name) {
  const bytes = createHash('sha256').update(name).digest().subarray(0, 16);
  bytes[6] = (bytes[6] & 0x0f) | 0x80;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  try {
    console.log(ensureSyft());
  } catch (error) {
    if (!(error instanceof SbomError)) throw error;
    console.error(`sbom: ${error.message}`);
    process.exit(1);
  }
}
