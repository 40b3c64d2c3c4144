// The image scripts (scripts/*.mjs), imported with their shapes checked: the tests, the global
// setup and the Dockerfile check never keep a second copy of a path, a name or a setting.
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

export interface RootfsScript {
  readonly ROOTFS: string;
  readonly IMAGE_EXECUTABLE: string;
  /** Link path → target: the names Envoy Gateway's and Contour's pods call the executable by. */
  readonly PEER_LINKS: Readonly<Record<string, string>>;
  readonly NONROOT: number;
  /** Where the image records the Debian packages its libraries come from, and those packages. */
  readonly DPKG_STATUS_DIR: string;
  readonly RUNTIME_PACKAGES: readonly string[];
  layoutRootfs(
    into: string,
    files: {
      binaries: ReadonlyArray<{ from: string; to: string }>;
      libraries: ReadonlyMap<string, string>;
      loader: { name: string; path: string };
      interpreter: string;
    },
  ): void;
  elfInterpreter(path: string): string;
}

export interface ImageScript {
  readonly IMAGE_NAME: string;
  imageTag(arch?: 'amd64' | 'arm64'): string;
  buildImage(options?: { arch?: 'amd64' | 'arm64'; log?: (line: string) => void }): Promise<{ id: string; tag: string; size: number }>;
  localContainerfile(dockerfile: string): string;
}

export interface PodmanScript {
  readonly CONTAINERS_CONF: string;
  podmanEnv(env?: NodeJS.ProcessEnv): NodeJS.ProcessEnv;
  requirePodman(): string;
}

async function load<T>(path: string, names: readonly string[]): Promise<T> {
  // A computed specifier: TypeScript cannot type a .mjs without declarations, so the shape is checked here.
  const loaded = (await import(pathToFileURL(resolve(path)).href)) as Record<string, unknown>;
  const missing = names.filter((name) => loaded[name] === undefined);
  if (missing.length > 0) throw new Error(`${path} no longer exports ${missing.join(', ')}`);
  return loaded as T;
}

export async function imageScripts(): Promise<{ rootfs: RootfsScript; image: ImageScript; podman: PodmanScript }> {
  return {
    rootfs: await load<RootfsScript>('scripts/image-rootfs.mjs', [
      'ROOTFS',
      'IMAGE_EXECUTABLE',
      'PEER_LINKS',
      'NONROOT',
      'DPKG_STATUS_DIR',
      'RUNTIME_PACKAGES',
      'layoutRootfs',
      'elfInterpreter',
    ]),
    image: await load<ImageScript>('scripts/image.mjs', ['IMAGE_NAME', 'imageTag', 'buildImage', 'localContainerfile']),
    podman: await load<PodmanScript>('scripts/podman.mjs', ['CONTAINERS_CONF', 'podmanEnv', 'requirePodman']),
  };
}
