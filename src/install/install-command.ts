// `envoy-shutdown-manager install <dir>`: a self-contained copy of this executable, its dynamic
// loader and exactly the libraries it links, that runs in any Linux container (no shell, no libc,
// no /proc needed) as `<dir>/current/lib/<loader> --library-path <dir>/current/lib <dir>/current/envoy-shutdown-manager`.
//
// Atomic and safe to re-run: files are copied into a staging directory, proven to run, renamed to
// a versioned directory, and only then does the `current` symlink switch to it (rename(2) of a
// symlink is atomic). A half-copied directory is never what `current` points at.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { chmod, copyFile, mkdir, mkdtemp, readdir, rename, rm, stat, symlink } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { isSea } from 'node:sea';
import { assertWritableDirectory } from '../handoff/fs-checks.js';
import { ExitCode, errorMessage, InstallError, UsageError } from '../shared/errors.js';
import { VERSION } from '../shared/version.js';
import { findRuntimeFiles, type RuntimeFiles } from './libraries.js';

const EXECUTABLE_NAME = 'envoy-shutdown-manager';
const CURRENT = 'current';
const LIB = 'lib';

export interface InstallConfig {
  readonly dir: string;
  /** Where `dir` is mounted in the container that runs the hook (the printed command uses it). */
  readonly mountPath: string;
  /** The executable to copy; the running one when it is the single executable. */
  readonly executable?: string;
}

export function installConfig(dir: string, mountPath: string | undefined): InstallConfig {
  for (const [what, path] of [
    ['install directory', dir],
    ['--mount-path', mountPath ?? dir],
  ] as const) {
    if (!path.startsWith('/')) throw new UsageError(`${what} "${path}" must be an absolute path`);
  }
  return { dir, mountPath: mountPath ?? dir };
}

/** The exec command a preStop hook uses to run the installed copy, before `shutdown` and its flags. */
function hookCommand(mountPath: string, loaderName: string): string[] {
  return commandIn(join(mountPath, CURRENT), loaderName);
}

/** How to run the copy laid out in `root` (a version directory, or `current`). */
function commandIn(root: string, loaderName: string): string[] {
  return [join(root, LIB, loaderName), '--library-path', join(root, LIB), join(root, EXECUTABLE_NAME)];
}

export async function runInstall(config: InstallConfig, write: (line: string) => void = (line) => process.stdout.write(`${line}\n`)): Promise<ExitCode> {
  const executable = config.executable ?? runningExecutable();
  await assertWritableDirectory(config.dir, 'install directory', 'mount a writable emptyDir there');
  const runtime = await findRuntimeFiles(executable);
  const version = `v-${VERSION}-${(await sha256(executable)).slice(0, 12)}`;
  const target = join(config.dir, version);
  await removeLeftovers(config.dir, (name) => /^\.(staging|current)-/.test(name));

  if (!(await isDirectory(target)) || verify(target, runtime.loader.name) !== undefined) {
    const staging = await mkdtemp(join(config.dir, '.staging-'));
    try {
      await copyLayout(staging, executable, runtime);
      const failure = verify(staging, runtime.loader.name);
      if (failure !== undefined) throw new InstallError(`the copy does not run: ${failure}`);
      await rm(target, { recursive: true, force: true });
      await rename(staging, target);
    } catch (error) {
      await rm(staging, { recursive: true, force: true });
      write(`error: install into ${config.dir} failed: ${describeCopyError(error)}`);
      return ExitCode.InstallFailed;
    }
  }
  const link = join(config.dir, `.current-${process.pid}`);
  await symlink(version, link);
  await rename(link, join(config.dir, CURRENT));
  await removeLeftovers(config.dir, (name) => name.startsWith('v-') && name !== version);

  const failure = verify(join(config.dir, CURRENT), runtime.loader.name);
  if (failure !== undefined) {
    write(`error: the installed copy does not run: ${failure}`);
    return ExitCode.InstallFailed;
  }
  const libraries = [...runtime.libraries.keys()].filter((soname) => soname !== runtime.loader.name);
  write(
    `installed ${EXECUTABLE_NAME} ${VERSION} into ${join(config.dir, version)}: the executable, ${runtime.loader.name} and ${libraries.length} libraries (${libraries.join(', ')})`,
  );
  write(`verified: ${hookCommand(config.dir, runtime.loader.name).join(' ')} --version printed ${VERSION}`);
  write(`preStop exec command (mounted at ${config.mountPath}), followed by shutdown and its flags:`);
  write(JSON.stringify([...hookCommand(config.mountPath, runtime.loader.name), 'shutdown']));
  return ExitCode.Success;
}

function runningExecutable(): string {
  if (!isSea()) throw new UsageError(`install copies the single executable: run it from the image, or from dist/${EXECUTABLE_NAME} after npm run package`);
  if (basename(process.execPath).startsWith('ld-')) throw new UsageError('run install from the executable itself, not through the dynamic loader');
  return process.execPath;
}

async function copyLayout(into: string, executable: string, runtime: RuntimeFiles): Promise<void> {
  await mkdir(join(into, LIB));
  await copy(executable, join(into, EXECUTABLE_NAME), 0o755);
  await copy(runtime.loader.path, join(into, LIB, runtime.loader.name), 0o755);
  for (const [soname, path] of runtime.libraries) {
    if (soname !== runtime.loader.name) await copy(path, join(into, LIB, soname), 0o644);
  }
  // Readable and runnable by any UID: the hook runs as the Envoy container's user.
  await chmod(join(into, LIB), 0o755);
  await chmod(into, 0o755);
}

async function copy(from: string, to: string, mode: number): Promise<void> {
  await copyFile(from, to);
  await chmod(to, mode);
}

/** Runs the copy in `root` through its own loader with an empty environment; undefined when it works. */
function verify(root: string, loaderName: string): string | undefined {
  const [loader, ...args] = commandIn(root, loaderName) as [string, ...string[]];
  const result = spawnSync(loader, [...args, '--version'], { env: {}, encoding: 'utf8', timeout: 30_000 });
  if (result.error !== undefined) return errorMessage(result.error);
  if (result.status !== 0 || result.stdout.trim() !== VERSION)
    return `exit ${result.status ?? result.signal}: ${(result.stderr || result.stdout).trim().split('\n')[0] ?? ''}`;
  return undefined;
}

function describeCopyError(error: unknown): string {
  const code = (error as { code?: unknown }).code;
  if (code === 'ENOSPC') return 'no space left (the copy needs about 110 MB: give the emptyDir a sizeLimit of 256Mi or more)';
  return errorMessage(error);
}

async function removeLeftovers(dir: string, isLeftover: (name: string) => boolean): Promise<void> {
  for (const name of await readdir(dir)) {
    if (isLeftover(name)) await rm(join(dir, name), { recursive: true, force: true });
  }
}

async function isDirectory(path: string): Promise<boolean> {
  return (await stat(path).catch(() => undefined))?.isDirectory() === true;
}

function sha256(path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const hash = createHash('sha256');
    createReadStream(path)
      .on('data', (chunk) => hash.update(chunk))
      .on('error', reject)
      .on('end', () => resolve(hash.digest('hex')));
  });
}
