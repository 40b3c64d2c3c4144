// Brings Prometheus' own text-format parser to this machine for the /metrics tests: the official
// Python client (prometheus_client, maintained by the Prometheus project), one pure-Python wheel
// pinned by version and sha256, in a virtual environment of its own outside the repository. Made
// once and reused while its stamp matches the pin.
//
//   node test/setup/prometheus-parser.mjs          # prints the environment's python, making it on the first run
import { ensurePinnedVenv, printWhenRun, venvDir } from './pinned-venv.mjs';

export const PROMETHEUS_CLIENT_VERSION = '0.26.0';
/** No dependencies; a py3-none-any wheel: any CPython 3 installs it. */
const REQUIREMENTS = `prometheus_client==${PROMETHEUS_CLIENT_VERSION} --hash=sha256:fa93d06737aa02bacd05794768508bb97d2fbee28cb3bca04eaae92f0ca953d6\n`;

/** The environment's python, after making it when it is missing or pinned otherwise. */
export function ensurePrometheusParser({ log } = {}) {
  return ensurePinnedVenv(
    {
      dir: venvDir('esm-prometheus-client', PROMETHEUS_CLIENT_VERSION, REQUIREMENTS),
      what: `prometheus_client==${PROMETHEUS_CLIENT_VERSION}`,
      purpose: "Prometheus' text-format parser, for the tests",
      requirements: REQUIREMENTS,
      versionCode: 'from importlib.metadata import version; print(version("prometheus_client"))',
      version: PROMETHEUS_CLIENT_VERSION,
    },
    log,
  );
}

printWhenRun(import.meta, ensurePrometheusParser);
