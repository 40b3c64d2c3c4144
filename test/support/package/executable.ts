// Runs the single executable the way the distroless image does: alone in a directory, with an
// empty environment, and (for the non-root checks) as the image's user 65532.
import { chmodSync, chownSync, copyFileSync, existsSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { tempDir } from '../cli.js';

/** The image's user and group (distroless `nonroot`). */
const NONROOT_ID = 65532;

/**
 * Who the non-root tests run as: 65532 when the tests run as root (CI), through setpriv;
 * otherwise the developer's own account, which is already not root.
 */
export const NON_ROOT_UID: number = process.getuid?.() === 0 ? NONROOT_ID : (process.getuid?.() ?? NONROOT_ID);

export interface IsolatedExecutable {
  /** The copy's directory: it holds nothing else. */
  readonly dir: string;
  /** The copy itself, owned by the test runner, readable and runnable by anyone. */
  readonly path: string;
  readonly cleanup: () => void;
}

/** Copies `executable` alone into a fresh directory that every user may enter, as /usr/local/bin is. */
export function isolatedCopy(executable: string): IsolatedExecutable {
  if (!existsSync(executable)) throw new Error(`${executable} is missing: the global setup packages it (node scripts/package.mjs)`);
  const dir = tempDir('esm-sea-');
  chmodSync(dir.path, 0o755);
  const path = join(dir.path, basename(executable));
  copyFileSync(resolve(executable), path);
  chmodSync(path, 0o755);
  return { dir: dir.path, path, cleanup: dir.cleanup };
}

/**
 * The command that runs `copy` from inside its own directory (`env --chdir`), so nothing the test
 * runner's working directory holds (node_modules, dist/) is within reach; as NON_ROOT_UID when
 * `nonRoot`. Both tools come from coreutils/util-linux, present on any Debian.
 */
export function executableCommand(copy: IsolatedExecutable, options: { nonRoot?: boolean } = {}): string[] {
  const inDir = [systemTool('env', 'coreutils'), `--chdir=${copy.dir}`, copy.path];
  if (options.nonRoot !== true || process.getuid?.() !== 0) return inDir;
  const ids = String(NONROOT_ID);
  return [systemTool('setpriv', 'util-linux'), `--reuid=${ids}`, `--regid=${ids}`, '--clear-groups', '--', ...inDir];
}

/** A fresh directory the non-root user may write, standing in for the pod's emptyDir volume. */
export function volumeDir(): { path: string; cleanup: () => void } {
  const dir = tempDir('esm-volume-');
  if (process.getuid?.() === 0) chownSync(dir.path, NONROOT_ID, NONROOT_ID);
  return dir;
}

function systemTool(name: string, debianPackage: string): string {
  const found = ['/usr/bin', '/bin', '/usr/sbin', '/sbin'].map((dir) => join(dir, name)).find((path) => existsSync(path));
  if (found === undefined) throw new Error(`${name} not found: install the Debian package ${debianPackage}`);
  return found;
}
