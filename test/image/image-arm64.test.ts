// The arm64 image, built like the amd64 one from the arm64 executable. Podman cannot start arm64
// containers on this x86-64 machine: that takes a binfmt_misc registration on the host, which the
// tests neither rely on nor make. So its root filesystem (`podman image mount`) runs as a chroot in
// the emulation namespace (scripts/emulation.mjs): the kernel hands its arm64 files to qemu, and
// they find only the loader and libraries the image itself holds.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../support/cli.js';
import { arm64Sysroot, inArm64Namespace } from '../support/package/emulated.js';
import { PodmanObjects, podman, testImages } from '../support/podman/podman.js';
import { imageScripts } from '../support/podman/scripts.js';
import { expectedFiles, imageFiles } from './support/image-files.js';

const { manager: AMD64, managerArm64: ARM64 } = testImages();
const { rootfs } = await imageScripts();
const VERSION = (JSON.parse(readFileSync('package.json', 'utf8')) as { version: string }).version;
const SYSROOT = await arm64Sysroot();
/** Several emulated runs in a row, each bounded by spawnSync's timeout: slow on a busy machine, never wrong. */
const EMULATED_TIMEOUT_MS = 240_000;

const objects = new PodmanObjects();
afterEach(() => objects.removeAll());

let mounted: string;
beforeAll(async () => {
  mounted = (await podman(['image', 'mount', ARM64])).trim();
});
afterAll(() => podman(['image', 'unmount', ARM64]));

/**
 * Runs the shell `steps` in the emulation namespace, after binding a fresh writable directory at the
 * image's /tmp (the image mount is read-only); in `steps`, "$1" is the image's root, for `chroot "$1" …`
 * (the image has no shell: each step is a chroot). Empty environment.
 */
function inImage(steps: string): { status: number | null; stdout: string; stderr: string } {
  const tmp = tempDir('esm-arm64-tmp-');
  try {
    const command = inArm64Namespace(SYSROOT, ['/bin/sh', '-c', `mount --bind "$0" "$1/tmp" && ${steps}`, tmp.path, mounted]);
    const result = spawnSync(command[0] ?? '', command.slice(1), { encoding: 'utf8', env: {}, timeout: 180_000 });
    return { status: result.status, stdout: result.stdout, stderr: result.stderr };
  } finally {
    tmp.cleanup();
  }
}

interface ImageConfig {
  readonly Architecture: string;
  readonly Os: string;
  readonly Config: { readonly User: string; readonly Entrypoint: string[]; readonly Cmd: string[]; readonly Env: string[] };
}

async function config(image: string): Promise<ImageConfig> {
  // podman 4.3 prints `{{json .}}` of one image as a one-element array.
  const [first] = JSON.parse(await podman(['image', 'inspect', image])) as ImageConfig[];
  if (first === undefined) throw new Error(`podman image inspect ${image} printed no image`);
  return first;
}

describe('the arm64 image', () => {
  it("is linux/arm64 with the amd64 image's user, entrypoint, command and environment", async () => {
    const [arm64, amd64] = [await config(ARM64), await config(AMD64)];
    expect([arm64.Os, arm64.Architecture, amd64.Architecture]).toEqual(['linux', 'arm64', 'amd64']);
    expect(arm64.Config).toMatchObject({ User: amd64.Config.User, Entrypoint: amd64.Config.Entrypoint, Cmd: amd64.Config.Cmd, Env: amd64.Config.Env });
  });

  it('holds the same layout as the amd64 image, with the arm64 loader and libraries where an arm64 Debian keeps them', async () => {
    const { files, listing } = await imageFiles(objects, ARM64);
    expect(files).toEqual(
      expectedFiles(rootfs, 'lib/aarch64-linux-gnu', 'ld-linux-aarch64.so.1', 'lib/ld-linux-aarch64.so.1 -> aarch64-linux-gnu/ld-linux-aarch64.so.1'),
    );
    expect(listing).toMatch(/^drwxrwxrwt .* tmp\/$/m);
    expect(readFileSync(`${mounted}/etc/passwd`, 'utf8')).toMatch(/^nonroot:x:65532:65532:/m);
  });

  it(
    'runs its executable, and answers as envoy-gateway and /bin/contour, from its own loader and libraries (emulated)',
    () => {
      const version = inImage(`exec chroot "$1" ${rootfs.IMAGE_EXECUTABLE} --version`);
      expect(version).toEqual({ status: 0, stdout: `${VERSION}\n`, stderr: '' });
      expect(inImage('exec chroot "$1" /usr/local/bin/envoy-gateway --help').stdout).toContain("answering as Envoy Gateway's envoy-gateway");
      expect(inImage('exec chroot "$1" /bin/contour --help').stdout).toContain("answering as Contour's contour");
    },
    EMULATED_TIMEOUT_MS,
  );

  it(
    'installs itself, and the installed copy runs through the loader it copied (emulated)',
    () => {
      const result = inImage(
        `mkdir "$0/esm" && chroot "$1" ${rootfs.IMAGE_EXECUTABLE} install /tmp/esm && exec chroot "$1" /tmp/esm/current/lib/ld-linux-aarch64.so.1 --library-path /tmp/esm/current/lib /tmp/esm/current/envoy-shutdown-manager --version`,
      );
      expect(result.status, result.stdout + result.stderr).toBe(0);
      const lines = result.stdout.trim().split('\n');
      expect(lines[0]).toMatch(/^installed envoy-shutdown-manager .* the executable, ld-linux-aarch64\.so\.1 and 6 libraries/);
      expect(lines.at(-1)).toBe(VERSION);
    },
    EMULATED_TIMEOUT_MS,
  );
});
