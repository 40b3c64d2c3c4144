// A Python virtual environment outside the repository holding exactly a set of wheels pinned by
// version and sha256 (--require-hashes, --no-deps with every dependency listed, no source builds):
// made once, reused while its stamp matches the pins, removed whole when any step fails.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const PIP_QUIET = ['-q', '--disable-pip-version-check', '--no-input'];

export class PinnedVenvError extends Error {}

/** `<cache>/<name>/<version>-<hash of the pins>`: one folder per set of pins. */
export function venvDir(name, version, requirements) {
  const pins = createHash('sha256').update(requirements).digest('hex').slice(0, 12);
  return join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), name, `${version}-${pins}`);
}

/**
 * The environment's python, made first when missing or pinned otherwise.
 * spec: { dir, what (e.g. "aioquic==1.7.2"), purpose, requirements (pip lines with --hash),
 *         pythonVersion? (the wheels' CPython), versionCode (prints the installed version), version }
 */
export function ensurePinnedVenv(spec, log = (line) => process.stderr.write(`${line}\n`)) {
  const python = join(spec.dir, 'venv', 'bin', 'python');
  const stamp = join(spec.dir, 'requirements.txt');
  if (existsSync(python) && existsSync(stamp) && readFileSync(stamp, 'utf8') === spec.requirements) return python;
  const fail = (detail) => new PinnedVenvError(`cannot provide ${spec.what}: ${detail}`);
  log(`installing ${spec.what} (${spec.purpose}), pinned by sha256, into ${spec.dir}`);
  rmSync(spec.dir, { recursive: true, force: true });
  mkdirSync(spec.dir, { recursive: true });
  const system = process.env.PYTHON ?? 'python3';
  try {
    if (spec.pythonVersion !== undefined) {
      const want = spec.pythonVersion;
      run(fail, system, [
        '-c',
        `import sys; v = "%d.%d" % sys.version_info[:2]; sys.exit(0 if v == "${want}" else "needs CPython ${want} (the pinned wheels are built for it), found " + v)`,
      ]);
    }
    const requirements = join(spec.dir, 'requirements.in');
    writeFileSync(requirements, spec.requirements);
    // Every wheel fetched and checked by hash before anything is made.
    const wheels = join(spec.dir, 'wheels');
    run(fail, system, ['-m', 'pip', 'download', ...PIP_QUIET, '--require-hashes', '--only-binary=:all:', '--no-deps', '-d', wheels, '-r', requirements]);
    // Made where it stays: a venv's scripts name its own path.
    run(fail, system, ['-m', 'venv', join(spec.dir, 'venv')]);
    run(fail, python, ['-m', 'pip', 'install', ...PIP_QUIET, '--require-hashes', '--no-index', '--find-links', wheels, '--no-deps', '-r', requirements]);
    rmSync(wheels, { recursive: true, force: true });
    const version = run(fail, python, ['-c', spec.versionCode]).trim();
    if (version !== spec.version) throw fail(`the environment holds version ${version}`);
    writeFileSync(stamp, spec.requirements);
    return python;
  } catch (error) {
    rmSync(spec.dir, { recursive: true, force: true });
    throw error;
  }
}

function run(fail, file, args) {
  const result = spawnSync(file, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 300_000 });
  if (result.status !== 0) {
    const lines = `${result.error?.message ?? ''}\n${result.stderr ?? ''}`
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line !== '');
    throw fail(`${[file, ...args.slice(0, 3)].join(' ')} failed: ${lines.slice(-3).join(' | ') || `exit ${result.status}`}`);
  }
  return result.stdout;
}

/** `node test/setup/<x>.mjs` prints the environment's python, or the one-line reason it cannot. */
export function printWhenRun(meta, ensure) {
  if (meta.url !== pathToFileURL(process.argv[1] ?? '').href) return;
  try {
    console.log(ensure());
  } catch (error) {
    console.error(error instanceof PinnedVenvError ? error.message : error);
    process.exit(1);
  }
}
