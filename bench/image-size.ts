// 12. Image sizes users feel: what a node pulls for each of our images (the compressed layers,
// config and manifest in the release's OCI archive: run `npm run release` first), beside an
// estimate for Envoy Gateway's and Contour's images from their binaries (EG_BIN, CONTOUR_BIN, as
// the peers bench; bench/README.md says how to build them): gzip of the binary, which is
// essentially all of a Go image on a distroless static base.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { gzipSync } from 'node:zlib';
import { progress, type Scenario, table } from './support/harness.js';

interface Descriptor {
  readonly digest: string;
  readonly size: number;
  readonly mediaType: string;
  readonly platform?: { readonly architecture: string; readonly os: string };
}

const MB = 1e6;
const mb = (bytes: number): string => `${(bytes / MB).toFixed(1)} MB`;

async function run(): Promise<string> {
  const version = (JSON.parse(readFileSync('package.json', 'utf8')) as { version: string }).version;
  const archive = resolve(`dist/release/envoy-shutdown-manager-${version}.oci.tar`);
  if (!existsSync(archive)) throw new Error(`${archive} is missing: run npm run release first`);
  const member = (path: string): string => execFileSync('tar', ['-xOf', archive, path], { encoding: 'utf8', maxBuffer: 16 * MB });
  const blob = (digest: string): string => member(`blobs/${digest.replace(':', '/')}`);
  const [top] = (JSON.parse(member('index.json')) as { manifests: Descriptor[] }).manifests;
  if (top === undefined) throw new Error(`${archive} holds no index`);
  const index = JSON.parse(blob(top.digest)) as { manifests: Descriptor[] };
  const rows: string[][] = [];
  for (const entry of index.manifests) {
    const manifest = JSON.parse(blob(entry.digest)) as { config: Descriptor; layers: Descriptor[] };
    const pulled = entry.size + manifest.config.size + manifest.layers.reduce((sum, layer) => sum + layer.size, 0);
    rows.push([`**ours**, linux/${entry.platform?.architecture ?? '?'}`, mb(pulled), 'measured: manifest, config and gzip layers in the release archive']);
  }
  for (const [label, variable] of [
    ['Envoy Gateway (`envoy-gateway`)', 'EG_BIN'],
    ['Contour (`contour`)', 'CONTOUR_BIN'],
  ] as const) {
    const path = process.env[variable];
    if (path === undefined || path === '' || !existsSync(path)) {
      rows.push([label, '—', `${variable} not set: not estimated in this run`]);
      continue;
    }
    progress('image-size', `compressing ${path}`);
    const compressed = gzipSync(readFileSync(path), { level: 6 }).length;
    rows.push([label, `≈ ${mb(compressed)}`, `estimated: gzip -6 of its binary built here (${mb(statSync(path).size)}), without the base image's layers`]);
  }
  return [
    "What a node downloads to start the container: for our images, the bytes of the manifest, the config and the gzip-compressed layer of each platform's image in the release archive (`npm run release`), the same bytes a registry serves after `skopeo copy --all`. The peers publish no image here to measure: their figures are estimates from the binaries built from their sources (bench/README.md), compressed as a registry layer is (gzip, level 6); their published images add a small base (distroless static) and may be built with other flags.",
    '',
    table(['image', 'compressed (pulled)', 'how'], rows),
    '',
    'Ours is larger because it carries Node 24 (the single executable is about 100 MiB before compression), while the peers are single Go binaries; the arm64 image is a little smaller than the amd64 one (its Node binary is).',
  ].join('\n');
}

export const imageSize: Scenario = { name: 'image-size', title: '12. Image sizes: what a node pulls', run };
