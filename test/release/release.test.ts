// `npm run release`, twice from the same commit into two directories (one fixture for the file):
// the same bytes both times; the archive is an OCI image index for linux/amd64 and linux/arm64 that
// skopeo copies whole and podman loads; the chart carries the index digest and the appVersion.
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { tempDir } from '../support/cli.js';
import { podman } from '../image/support/podman.js';

interface ReleaseScript {
  release(options: { out: string; log?: (line: string) => void }): Promise<{ files: string[]; digest: string; epoch: number }>;
}

const VERSION = (JSON.parse(readFileSync('package.json', 'utf8')) as { version: string }).version;
const ARCHIVE = `envoy-shutdown-manager-${VERSION}.oci.tar`;
const CHART = `envoy-shutdown-manager-${VERSION}.tgz`;
const script = (await import(pathToFileURL(resolve('scripts/release.mjs')).href)) as Partial<ReleaseScript>;
if (typeof script.release !== 'function') throw new Error('scripts/release.mjs no longer exports release');
const release = script.release;

const dirs = [tempDir('esm-release-a-'), tempDir('esm-release-b-')];
const [first, second] = dirs.map((dir) => dir.path) as [string, string];
let digest: string;
beforeAll(async () => {
  const a = await release({ out: first, log: () => undefined });
  const b = await release({ out: second, log: () => undefined });
  expect(b.digest).toBe(a.digest);
  digest = a.digest;
}, 600_000);
afterAll(() => {
  for (const dir of dirs) dir.cleanup();
});

function sha256sum(dir: string): string {
  return execFileSync('sha256sum', readdirSync(dir).sort(), { cwd: dir, encoding: 'utf8' });
}

describe('npm run release', () => {
  it('writes the archive, the chart and SHA256SUMS, byte for byte the same twice from one commit', () => {
    expect(readdirSync(first).sort()).toEqual([ARCHIVE, CHART, 'SHA256SUMS'].sort());
    expect(sha256sum(second)).toBe(sha256sum(first));
    const check = spawnSync('sha256sum', ['-c', 'SHA256SUMS'], { cwd: first, encoding: 'utf8' });
    expect(check.stdout).toBe(`${ARCHIVE}: OK\n${CHART}: OK\n`);
  });

  it('archives one OCI image index holding linux/amd64 and linux/arm64, which skopeo copies whole with the same digest', () => {
    const out = tempDir('esm-skopeo-');
    try {
      execFileSync('skopeo', ['copy', '--all', '--quiet', `oci-archive:${join(first, ARCHIVE)}`, `oci:${out.path}:copy`], { encoding: 'utf8' });
      const top = JSON.parse(readFileSync(join(out.path, 'index.json'), 'utf8')) as { manifests: Array<{ digest: string; mediaType: string }> };
      expect(top.manifests.map((entry) => [entry.mediaType, entry.digest])).toEqual([['application/vnd.oci.image.index.v1+json', digest]]);
      const index = JSON.parse(readFileSync(join(out.path, 'blobs', ...digest.split(':')), 'utf8')) as { manifests: Array<{ platform: { os: string; architecture: string } }> };
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
    expect(parse(files('values.yaml'))).toMatchObject({ shutdownManager: { image: { digest } } });
  });
});
