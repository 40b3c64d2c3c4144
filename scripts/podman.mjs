// Runs podman with this project's settings (scripts/containers.conf through CONTAINERS_CONF, so
// nothing in /etc is needed or changed), and says clearly when podman is missing.
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const CONTAINERS_CONF = join(dirname(fileURLToPath(import.meta.url)), 'containers.conf');

export class PodmanError extends Error {}

/** The environment every podman command runs with. */
export function podmanEnv(env = process.env) {
  return { ...env, CONTAINERS_CONF };
}

/** Throws one clear reason when podman (with runc) cannot run here. */
export function requirePodman() {
  const result = spawnSync('podman', ['--version'], { env: podmanEnv(), encoding: 'utf8' });
  if (result.error !== undefined || result.status !== 0) {
    throw new PodmanError(
      'podman is not installed or does not run: the image, pod and sidecar-less tests need it ' +
        `(Debian: apt-get install -y podman runc; .ci/run does it). ${result.error?.message ?? result.stderr ?? ''}`.trim(),
    );
  }
  return result.stdout.trim();
}

/** Runs one podman command to completion; throws with its output when it fails. */
export function podman(args, { timeoutMs = 120_000, input } = {}) {
  const result = spawnSync('podman', args, { env: podmanEnv(), encoding: 'utf8', timeout: timeoutMs, input, maxBuffer: 64 * 1024 * 1024 });
  if (result.error !== undefined || result.status !== 0) {
    throw new PodmanError(`podman ${args.join(' ')} failed (${result.error?.message ?? `exit ${result.status}`}):\n${result.stderr}${result.stdout}`.trim());
  }
  return result.stdout;
}
