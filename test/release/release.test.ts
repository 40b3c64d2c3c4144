// `npm run release`, twice from the same commit into two directories (one fixture for the file):
// the first from this checkout's packaged executables, the second from nothing but a copy of the
// sources (bundled, packaged, laid out, built, archived, charted and scanned anew, in another
// directory); the same bytes both times. The archive is an OCI image index for linux/amd64 and
// linux/arm64 that skopeo copies whole and podman loads; the chart carries the index digest and
// the appVersion; each platform's SBOM names the executable and the Debian packages in the image.
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { tempDir } from '../support/cli.js';
import { podman } from '../support/podman/podman.js';

interface Release {
  files: string[];
  digest: string;
  platforms: Record<string, string>;
  epoch: number;
}
interface ReleaseScript {
  release(options: { out: string; log?: (line: string) => void }): Promise<Release>;
}
interface SbomScript {
  SYFT_VERSION: string;
  sbomName(version: string, arch: string): string;
}

const VERSION = (JSON.parse(readFileSync('package.json', 'utf8')) as { version: string }).version;
const ARCHIVE = `envoy-shutdown-manager-${VERSION}.oci.tar`;
const CHART = `envoy-shutdown-manager-${VERSION}.tgz`;
const ARCHES = ['amd64', 'arm64'] as const;
const script = (await import(pathToFileURL(resolve('scripts/release.mjs')).href)) as Partial<ReleaseScript>;
if (typeof script.release !== 'function') throw new Error('scripts/release.mjs no longer exports release');
const release = script.release;
const sbomScript = (await import(pathToFileURL(resolve('scripts/sbom.mjs')).href)) as Partial<SbomScript>;
if (typeof sbomScript.sbomName !== 'function' || typeof sbomScript.SYFT_VERSION !== 'string')
  throw new Error('scripts/sbom.mjs no longer exports sbomName and SYFT_VERSION');
const { sbomName, SYFT_VERSION } = sbomScript as SbomScript;
const SBOMS = ARCHES.map((arch) => sbomName(VERSION, arch));
/** What a release is made from: everything else (dist/, the podman build contexts) is made anew. */
const SOURCES = ['package.json', 'tsconfig.json', 'Dockerfile', 'src', 'scripts', 'charts'];

const out = tempDir('esm-release-a-');
const first = out.path;
// Beside node_modules, on its file system: the copy links the dependencies' files (cp -al).
const copy = mkdtempSync(resolve('dist', 'release-copy-'));
const second = join(copy, 'dist', 'release');
let a: Release;
let b: Release;
// Two full builds, the second from packaging up: 505 s in a whole-suite run on two cores at a load average of 25 to 55.
beforeAll(async () => {
  a = await release({ out: first, log: () => undefined });
  b = independentRelease(a.epoch);
}, 900_000);
afterAll(() => {
  out.cleanup();
  rmSync(copy, { recursive: true, force: true });
});

/**
 * The sources copied into `copy` and the dependencies' files hard-linked (the files npm ci would
 * give; a symbolic link would put another path into the bundle), then bundle, package and release there.
 */
function independentRelease(epoch: number): Release {
  for (const source of SOURCES) cpSync(source, join(copy, source), { recursive: true });
  execFileSync('cp', ['-al', resolve('node_modules'), join(copy, 'node_modules')]);
  mkdirSync(join(copy, 'dist'));
  // No .git in the copy: the first release's time, as SOURCE_DATE_EPOCH.
  const env = { ...process.env, SOURCE_DATE_EPOCH: String(epoch) };
  const run = (args: string[]): string => {
    const result = spawnSync(process.execPath, args, { cwd: copy, env, encoding: 'utf8', timeout: 500_000, maxBuffer: 16 * 1024 * 1024 });
    if (result.status !== 0)
      throw new Error(`node ${args.join(' ')} in ${copy} failed (exit ${result.status ?? result.signal}): ${result.stderr}${result.stdout}`.slice(-3_000));
    return result.stdout;
  };
  run(['scripts/build.mjs']);
  run(['scripts/package.mjs', '--arch=all']);
  const out = run([
    '--input-type=module',
    '-e',
    `const { release } = await import('./scripts/release.mjs'); console.log(JSON.stringify(await release({ log: () => undefined })));`,
  ]);
  return JSON.parse(out.trim().split('\n').at(-1) ?? '') as Release;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function sha256sum(dir: string): string {
  return execFileSync('sha256sum', readdirSync(dir).sort(), { cwd: dir, encoding: 'utf8' });
}

interface Component {
  type: string;
  name: string;
  version?: string;
  purl?: string;
}
function sbom(arch: (typeof ARCHES)[number]): {
  serialNumber: string;
  metadata: { timestamp: string; tools: { components: Component[] }; component: Component };
  components: Component[];
} {
  return JSON.parse(readFileSync(join(first, sbomName(VERSION, arch)), 'utf8')) as ReturnType<typeof sbom>;
}

/** The Debian packages the image records, name → version, read from the image's layers in the archive. */
function recordedPackages(arch: (typeof ARCHES)[number]): Record<string, string> {
  const dir = tempDir('esm-release-rootfs-');
  try {
    const image = join(dir.path, 'image');
    execFileSync('skopeo', ['copy', '--quiet', `--override-arch=${arch}`, `oci-archive:${join(first, ARCHIVE)}`, `dir:${image}`]);
    const manifest = JSON.parse(readFileSync(join(image, 'manifest.json'), 'utf8')) as { layers: Array<{ digest: string }> };
    const rootfs = join(dir.path, 'rootfs');
    mkdirSync(rootfs);
    for (const layer of manifest.layers) {
      execFileSync('tar', [
        '-xf',
        join(image, layer.digest.replace(/^sha256:/, '')),
        '-C',
        rootfs,
        '--wildcards',
        '--no-wildcards-match-slash',
        'var/lib/dpkg/status.d/*',
      ]);
    }
    const status = join(rootfs, 'var/lib/dpkg/status.d');
    const packages: Record<string, string> = {};
    for (const name of readdirSync(status).filter((file) => !file.endsWith('.md5sums'))) {
      const control = readFileSync(join(status, name), 'utf8');
      packages[/^Package: (.+)$/m.exec(control)?.[1] ?? name] = /^Version: (.+)$/m.exec(control)?.[1] ?? '';
    }
    return packages;
  } finally {
    dir.cleanup();
  }
}

describe('npm run release', () => {
  it('writes the archive, the chart, the SBOMs and SHA256SUMS, byte for byte the same from a second, independent build', () => {
    expect(readdirSync(first).sort()).toEqual([ARCHIVE, CHART, ...SBOMS, 'SHA256SUMS'].sort());
    expect(readFileSync(join(second, 'SHA256SUMS'), 'utf8')).toBe(readFileSync(join(first, 'SHA256SUMS'), 'utf8'));
    expect(sha256sum(second)).toBe(sha256sum(first));
    expect(b.digest).toBe(a.digest);
    expect(b.platforms).toEqual(a.platforms);
    expect(Object.keys(a.platforms).sort()).toEqual([...ARCHES]);
    const check = spawnSync('sha256sum', ['-c', 'SHA256SUMS'], { cwd: first, encoding: 'utf8' });
    expect(check.stdout).toBe(
      [ARCHIVE, ...SBOMS, CHART]
        .sort()
        .map((name) => `${name}: OK\n`)
        .join(''),
    );
  });

  it.each(ARCHES)('describes the linux/%s image in a CycloneDX SBOM by syft: the executable and the Debian packages with their versions', (arch) => {
    const bom = sbom(arch);
    expect(bom.metadata.tools.components).toContainEqual(expect.objectContaining({ name: 'syft', version: SYFT_VERSION.replace(/^v/, '') }));
    expect(bom.metadata.component).toMatchObject({ type: 'container', name: 'envoy-shutdown-manager', version: VERSION });
    // The executable, from its ELF package note.
    expect(bom.components).toContainEqual(
      expect.objectContaining({ name: 'envoy-shutdown-manager', version: VERSION, purl: `pkg:generic/envoy-shutdown-manager@${VERSION}` }),
    );
    const packages = recordedPackages(arch);
    expect(Object.keys(packages).sort()).toEqual(['libc6', 'libgcc-s1', 'libstdc++6']);
    for (const [name, version] of Object.entries(packages)) {
      const found = bom.components.filter((component) => component.name === name);
      expect(
        found.map(({ type, version: v }) => ({ type, version: v })),
        name,
      ).toEqual([{ type: 'library', version }]);
      // A Debian purl with the release (the image's os-release), as scanners match it against Debian's security tracker.
      expect(found[0]?.purl).toMatch(
        new RegExp(
          `^pkg:deb/debian/${escapeRegExp(encodeURIComponent(name))}@${escapeRegExp(encodeURIComponent(version))}\\?arch=${arch}&distro=debian-12(&|$)`,
        ),
      );
    }
  });

  it('fixes what syft would vary between runs: the timestamp is the release time, the serial number comes from the image digest', () => {
    const [amd64, arm64] = ARCHES.map(sbom) as [ReturnType<typeof sbom>, ReturnType<typeof sbom>];
    for (const bom of [amd64, arm64]) expect(bom.metadata.timestamp).toBe(new Date(a.epoch * 1000).toISOString().replace('.000Z', 'Z'));
    expect(amd64.serialNumber).toMatch(/^urn:uuid:[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(arm64.serialNumber).not.toBe(amd64.serialNumber);
  });

  it('archives one OCI image index holding linux/amd64 and linux/arm64, which skopeo copies whole with the same digest', () => {
    const out = tempDir('esm-skopeo-');
    try {
      execFileSync('skopeo', ['copy', '--all', '--quiet', `oci-archive:${join(first, ARCHIVE)}`, `oci:${out.path}:copy`], { encoding: 'utf8' });
      const top = JSON.parse(readFileSync(join(out.path, 'index.json'), 'utf8')) as { manifests: Array<{ digest: string; mediaType: string }> };
      expect(top.manifests.map((entry) => [entry.mediaType, entry.digest])).toEqual([['application/vnd.oci.image.index.v1+json', a.digest]]);
      const index = JSON.parse(readFileSync(join(out.path, 'blobs', ...a.digest.split(':')), 'utf8')) as {
        manifests: Array<{ platform: { os: string; architecture: string } }>;
      };
      expect(index.manifests.map((entry) => `${entry.platform.os}/${entry.platform.architecture}`).sort()).toEqual(['linux/amd64', 'linux/arm64']);
    } finally {
      out.cleanup();
    }
  });

  it('is loaded by podman load: the image for this machine, linux/amd64', async () => {
    const loaded = await podman(['load', '--quiet', '--input', join(first, ARCHIVE)], 300_000);
    const name = /Loaded image(?:\(s\))?: (\S+)/.exec(loaded)?.[1];
    expect(name, loaded).toBe(`localhost/envoy-shutdown-manager:${VERSION}`);
    expect((await podman(['image', 'inspect', '--format', '{{.Os}}/{{.Architecture}}', name ?? ''])).trim()).toBe('linux/amd64');
  });

  it('packages the chart with the appVersion and the index digest it was built with', () => {
    const files = (name: string): string => execFileSync('tar', ['-xzOf', join(first, CHART), `envoy-shutdown-manager/${name}`], { encoding: 'utf8' });
    expect(parse(files('Chart.yaml'))).toMatchObject({ name: 'envoy-shutdown-manager', appVersion: VERSION });
    expect(parse(files('values.yaml'))).toMatchObject({ shutdownManager: { image: { digest: a.digest } } });
  });
});
