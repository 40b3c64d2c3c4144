// Brings a real QUIC / HTTP/3 client to this machine for the protocol tests: npm has none that
// runs on Node 20, so it is aioquic from PyPI, in a virtual environment of its own outside the
// repository. pip installs exactly the wheels pinned below (each by version and sha256, with
// --require-hashes, no resolver, no source builds); the environment is made once and reused while
// its stamp matches these pins.
//
//   node scripts/aioquic.mjs          # prints the environment's python, making it on the first run
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

export const AIOQUIC_VERSION = '1.7.2';
/** The wheels are built for CPython 3.11 (cffi's is not abi3): another Python cannot install them. */
const PYTHON_VERSION = '3.11';
/** aioquic and everything it needs, as PyPI served them for CPython 3.11 on manylinux x86_64 when they were pinned. */
const REQUIREMENTS = [
  'aioquic==1.7.2 --hash=sha256:4f85133486a7f39743acea265aa4a67696e0b4729864f747fc914a197210dfef',
  'attrs==26.1.0 --hash=sha256:c647aa4a12dfbad9333ca4e71fe62ddc36f4e63b2d260a37a8b83d2f043ac309',
  'certifi==2026.10.19.post1 --hash=sha256:1324c476b4811eff41a8bc2122cd0bbd4d9c7234c725446d99ab1612b3a7fdd2',
  'cffi==2.1.1 --hash=sha256:34e261f78cb6ceaaa36f42f2613f4380d94d9c759a9c73c769ee6e0247364632',
  'cryptography==50.0.2 --hash=sha256:9dab55f57c74c3cad24c323bacbbd04be4705ba6eb0d92e920b1fc4837ed5079',
  'pycparser==3.12 --hash=sha256:a076f3f489b39b43ed13563a1dafe42447445bec2e294154ec5c57fcdda4c85e',
  'pylsqpack==1.0.0 --hash=sha256:fdf021e7f188775033abe8e51bc3be1e7e30713de7a288afacf6354a5822afde',
  'pyopenssl==26.4.0 --hash=sha256:f0eb0cb2d581d3ad2b9c489468485e7f2ab6727d08401bcf9d824c3caddf3c1c',
  'service-identity==26.1.0 --hash=sha256:68c32dadbb69135fb951077677e07cd7f6031020f3a8c8f47a28cda8a0742118',
  'typing-extensions==4.16.0 --hash=sha256:481caa481374e813c1b176ada14e97f1f67a4539ce9cfeb3f350d78d6370c2e8',
].join('\n');
const PINS = createHash('sha256').update(REQUIREMENTS).digest('hex');

/** Outside the repository (a fresh work tree keeps it), one folder per set of pins. */
const CACHE = join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'esm-aioquic', `${AIOQUIC_VERSION}-${PINS.slice(0, 12)}`);
/** The environment's interpreter; its presence beside a matching STAMP means the environment is complete. */
export const AIOQUIC_PYTHON = join(CACHE, 'venv', 'bin', 'python');
const PIP_QUIET = ['-q', '--disable-pip-version-check', '--no-input'];
const STAMP = join(CACHE, 'pins.sha256');

export class AioquicSetupError extends Error {}

/** The environment's python, after making it when it is missing or pinned otherwise. */
export function ensureAioquic({ log = (line) => process.stderr.write(`${line}\n`) } = {}) {
  if (existsSync(AIOQUIC_PYTHON) && existsSync(STAMP) && readFileSync(STAMP, 'utf8').trim() === PINS) return AIOQUIC_PYTHON;
  log(`installing aioquic==${AIOQUIC_VERSION} (a QUIC / HTTP/3 client for the tests), pinned by sha256, into ${CACHE}`);
  rmSync(CACHE, { recursive: true, force: true });
  mkdirSync(CACHE, { recursive: true });
  try {
    run(python(), ['-c', `import sys; v = "%d.%d" % sys.version_info[:2]; sys.exit(0 if v == "${PYTHON_VERSION}" else "needs CPython ${PYTHON_VERSION} (the pinned wheels are built for it), found " + v)`]);
    const requirements = join(CACHE, 'requirements.txt');
    writeFileSync(requirements, `${REQUIREMENTS}\n`);
    // Every wheel fetched and checked by hash before anything is made; --no-deps with every
    // dependency listed: nothing is resolved.
    const wheels = join(CACHE, 'wheels');
    run(python(), ['-m', 'pip', 'download', ...PIP_QUIET, '--require-hashes', '--only-binary=:all:', '--no-deps', '-d', wheels, '-r', requirements]);
    // Made where it stays: a venv's scripts name its own path.
    run(python(), ['-m', 'venv', join(CACHE, 'venv')]);
    run(AIOQUIC_PYTHON, ['-m', 'pip', 'install', ...PIP_QUIET, '--require-hashes', '--no-index', '--find-links', wheels, '--no-deps', '-r', requirements]);
    rmSync(wheels, { recursive: true, force: true });
    const version = run(AIOQUIC_PYTHON, ['-c', 'import aioquic; print(aioquic.__version__)']).trim();
    if (version !== AIOQUIC_VERSION) throw fail(`the environment imports aioquic ${version}`);
    writeFileSync(STAMP, `${PINS}\n`);
    return AIOQUIC_PYTHON;
  } catch (error) {
    rmSync(CACHE, { recursive: true, force: true });
    throw error;
  }
}

function run(file, args) {
  const result = spawnSync(file, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 300_000 });
  if (result.status !== 0) {
    const lines = `${result.error?.message ?? ''}\n${result.stderr ?? ''}`.split('\n').map((line) => line.trim()).filter((line) => line !== '');
    throw fail(`${[file, ...args.slice(0, 3)].join(' ')} failed: ${lines.slice(-3).join(' | ') || `exit ${result.status}`}`);
  }
  return result.stdout;
}

function python() {
  return process.env.PYTHON ?? 'python3';
}

function fail(detail) {
  return new AioquicSetupError(`cannot provide aioquic==${AIOQUIC_VERSION}: ${detail}`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  try {
    console.log(ensureAioquic());
  } catch (error) {
    console.error(error instanceof AioquicSetupError ? error.message : error);
    process.exit(1);
  }
}
