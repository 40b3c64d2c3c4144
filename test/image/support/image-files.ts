// What an image holds, read through `podman export` of a container created from it (never started:
// an image for another architecture is read the same way).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type PodmanObjects, podman } from '../../support/podman/podman.js';

export interface ImageListing {
  /** Regular files and links (`path -> target`), without the mount points podman adds to every container. */
  readonly files: string[];
  /** `tar -tv` of the whole export. */
  readonly listing: string;
}

export async function imageFiles(objects: PodmanObjects, image: string): Promise<ImageListing> {
  const name = objects.container('files');
  await podman(['create', '--name', name, ...objects.labelArgs, image]);
  const dir = mkdtempSync(join(tmpdir(), 'esm-export-'));
  try {
    await podman(['export', '--output', join(dir, 'fs.tar'), name]);
    const listing = execFileSync('tar', ['-tvf', join(dir, 'fs.tar')], { encoding: 'utf8' });
    // Regular files and links only; podman adds the empty mount points of every container (dev, proc, sys, run, etc/hosts…).
    const added = ['etc/hosts', 'etc/resolv.conf', 'etc/hostname'];
    const files = listing
      .split('\n')
      .filter((line) => /^[-l]/.test(line))
      .map((line) => line.split(/\s+/).slice(5).join(' '))
      .filter((path) => !/^(dev|proc|sys|run)\//.test(path) && !added.includes(path));
    return { files: files.sort(), listing };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The layout both images share: the executable, its links, passwd and group, the loader and
 * libraries in `libDir`, the link at the path the executable names its loader by, and the record
 * of the Debian packages the libraries come from (and of their Debian release).
 */
export function expectedFiles(
  rootfs: { IMAGE_EXECUTABLE: string; PEER_LINKS: Readonly<Record<string, string>>; DPKG_STATUS_DIR: string; RUNTIME_PACKAGES: readonly string[] },
  libDir: string,
  loader: string,
  interpreterLink: string,
): string[] {
  const libraries = [loader, 'libc.so.6', 'libdl.so.2', 'libgcc_s.so.1', 'libm.so.6', 'libpthread.so.0', 'libstdc++.so.6'].map((name) => `${libDir}/${name}`);
  const packages = rootfs.RUNTIME_PACKAGES.flatMap((name) => [name, `${name}.md5sums`]).map((name) => `${rootfs.DPKG_STATUS_DIR}/${name}`);
  return [
    'etc/group',
    'etc/os-release',
    'etc/passwd',
    ...libraries,
    interpreterLink,
    ...packages,
    rootfs.IMAGE_EXECUTABLE.slice(1),
    ...Object.entries(rootfs.PEER_LINKS).map(([link, target]) => `${link.slice(1)} -> ${target}`),
  ].sort();
}
