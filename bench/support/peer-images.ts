// The peers' own shutdown managers as images FROM scratch: Envoy Gateway's `envoy-gateway` and
// Contour's `contour` (static Go binaries, built from the commits scripts/peer-binaries.mjs pins,
// or taken from EG_BIN / CONTOUR_BIN), each at the path its rendered pod execs, with a /tmp the
// pod's user can write (EG's ready file) and nothing else. Tagged by the binary's content, so a
// rebuilt binary makes a new image and an unchanged one reuses it.
import { createHash } from 'node:crypto';
import { chmodSync, createReadStream, existsSync, linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

export type PeerManager = 'envoy-gateway' | 'contour';

interface PeerBinariesScript {
  readonly PEERS: Readonly<Record<'eg' | 'contour', { readonly env: string; readonly commit: string; readonly repo: string }>>;
  ensurePeerBinary(peer: unknown, log?: (line: string) => void): string;
}

interface PodmanScript {
  podman(args: readonly string[], options?: { timeoutMs?: number }): string;
}

/** Where each peer's pod execs its manager (EG through PATH, Contour by absolute path). */
const IN_IMAGE: Readonly<Record<PeerManager, string>> = { 'envoy-gateway': '/usr/local/bin/envoy-gateway', contour: '/bin/contour' };

export interface PeerBinary {
  readonly path: string;
  /** `owner/name@commit`, or the variable the path came from. */
  readonly source: string;
}

/** The peer's binary: $EG_BIN / $CONTOUR_BIN when set, else built (or reused) from the pinned commit. */
export async function peerBinary(peer: PeerManager, log: (line: string) => void): Promise<PeerBinary> {
  const script = (await import(pathToFileURL(resolve('scripts/peer-binaries.mjs')).href)) as PeerBinariesScript;
  const pin = script.PEERS[peer === 'envoy-gateway' ? 'eg' : 'contour'];
  const given = process.env[pin.env];
  if (given !== undefined && given !== '') return { path: resolve(given), source: `$${pin.env}` };
  return { path: script.ensurePeerBinary(pin, log), source: `${pin.repo}@${pin.commit.slice(0, 12)}` };
}

/** Builds (or finds) the image; returns its id. */
export async function peerManagerImage(peer: PeerManager, binary: string): Promise<string> {
  const { podman } = (await import(pathToFileURL(resolve('scripts/podman.mjs')).href)) as PodmanScript;
  const digest = (await sha256(binary)).slice(0, 16);
  const tag = `localhost/esm-bench-${peer}:${digest}`;
  const existing = podman(['images', '--quiet', '--filter', `reference=${tag}`]).trim();
  if (existing !== '') return existing.split('\n')[0] ?? existing;
  // The context beside the binary (a hard link: no copy of a 240 MB file), removed after the build.
  const context = join(dirname(binary), `.image-${process.pid}`);
  rmSync(context, { recursive: true, force: true });
  try {
    const target = join(context, 'rootfs', IN_IMAGE[peer]);
    mkdirSync(dirname(target), { recursive: true });
    linkSync(binary, target);
    mkdirSync(join(context, 'rootfs', 'tmp'));
    chmodSync(join(context, 'rootfs', 'tmp'), 0o1777);
    writeFileSync(join(context, 'Containerfile'), `FROM scratch\nCOPY rootfs/ /\nENV PATH=/usr/local/bin:/bin\nENTRYPOINT ["${IN_IMAGE[peer]}"]\n`);
    const iidfile = join(context, 'iid');
    podman(['build', '--pull=never', '--network', 'none', '--quiet', '--iidfile', iidfile, '-t', tag, '-f', join(context, 'Containerfile'), context], {
      timeoutMs: 300_000,
    });
    return readFileSync(iidfile, 'utf8').trim();
  } finally {
    rmSync(context, { recursive: true, force: true });
  }
}

function sha256(path: string): Promise<string> {
  if (!existsSync(path)) return Promise.reject(new Error(`no such binary: ${path}`));
  return new Promise((done, fail) => {
    const hash = createHash('sha256');
    createReadStream(path)
      .on('data', (chunk) => hash.update(chunk))
      .on('end', () => done(hash.digest('hex')))
      .on('error', fail);
  });
}
