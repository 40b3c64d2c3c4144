// Brings Prometheus' own text-format parser to this machine for the /metrics tests: the official
// Python client (prometheus_client, maintained by the Prometheus project), one pure-Python wheel
// pinned by version and sha256, in a virtual environment of its own outside the repository. Made
// once and reused while its stamp matches the pin.
//
//   node scripts/prometheus-parser.mjs          # prints the environment's python, making it on the first run
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

export const PROMETHEUS_CLIENT_VERSION = '0.26.0';
/** No dependencies; a py3-none-any wheel: any CPython 3 installs it. */
const REQUIREMENT = `prometheus_client==${PROMETHEUS_CLIENT_VERSION} --hash=sha256:fa93d06737aa02bacd05794768508bb97d2fbee28cb3bca04eaae92f0ca953d6`;

const CACHE = join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'esm-prometheus-client', PROMETHEUS_CLIENT_VERSION);
export const PROMETHEUS_PYTHON = join(CACHE, 'venv', 'bin', 'python');
const STAMP = join(CACHE, 'requirement.txt');
const PIP_QUIET = ['-q', '--disable-pip-version-check', '--no-input'];

export class PrometheusParserSetupError extends Error {}

/** The environment's python, after making it when it is missing or pinned otherwise. */
export function ensurePrometheusParser({ log = (line) => process.stderr.write(`${line}\n`) } = {}) {
  if (existsSync(PROMETHEUS_PYTHON) && existsSync(STAMP) && readFileSync(STAMP, 'utf8').trim() === REQUIREMENT) return PROMETHEUS_PYTHON;
  log(`installing prometheus_client==${PROMETHEUS_CLIENT_VERSION} (Prometheus' text-format parser, for the tests), pinned by sha256, into ${CACHE}`);
  rmSync(CACHE, { recursive: true, force: true });
  mkdirSync(CACHE, { recursive: true });
  try {
    const requirements = join(CACHE, 'requirements.in');
    writeFileSync(requirements, `${REQUIREMENT}\n`);
    run(process.env.PYTHON ?? 'python3', ['-m', 'venv', join(CACHE, 'venv')]);
    run(PROMETHEUS_PYTHON, ['-m', 'pip', 'install', ...PIP_QUIET, '--require-hashes', '--only-binary=:all:', '--no-deps', '-r', requirements]);
    const version = run(PROMETHEUS_PYTHON, ['-c', 'from importlib.metadata import version; print(version("prometheus_client"))']).trim();
    if (version !== PROMETHEUS_CLIENT_VERSION) throw new PrometheusParserSetupError(`the environment holds prometheus_client ${version}`);
    writeFileSync(STAMP, `${REQUIREMENT}\n`);
    return PROMETHEUS_PYTHON;
  } catch (error) {
    rmSync(CACHE, { recursive: true, force: true });
    throw error;
  }
}

function run(file, args) {
  const result = spawnSync(file, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 300_000 });
  if (result.status !== 0) {
    const lines = `${result.error?.message ?? ''}\n${result.stderr ?? ''}`.split('\n').map((line) => line.trim()).filter((line) => line !== '');
    throw new PrometheusParserSetupError(`cannot provide prometheus_client==${PROMETHEUS_CLIENT_VERSION}: ${[file, ...args.slice(0, 3)].join(' ')} failed: ${lines.slice(-3).join(' | ') || `exit ${result.status}`}`);
  }
  return result.stdout;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  try {
    console.log(ensurePrometheusParser());
  } catch (error) {
    console.error(error instanceof PrometheusParserSetupError ? error.message : error);
    process.exit(1);
  }
}
