// Installs the Debian packages the tests, the image and the packaging need when their commands are
// missing, so `npm ci && npm test` stays the only set-up on a fresh Debian machine: strip (the single
// executable), podman with runc (the image, pod and sidecar-less tests), openssl (the protocol and peer-fixture tests'
// certificates), haproxy (the fleet tests). Elsewhere, or without root, it says exactly what to
// install instead of trying.
//
//   node scripts/debian.mjs        # installs what is missing, prints nothing when all is there
import { spawnSync } from 'node:child_process';
import { pathToFileURL } from 'node:url';

/**
 * Each command and the package that brings it. runc is named: podman accepts crun or runc, and apt
 * would pick crun, which fails on these machines' hybrid cgroups. podman's recommends come along
 * (buildah builds the images, catatonit the pod's infra image).
 */
const NEEDED = [
  { command: 'strip', pkg: 'binutils' },
  { command: 'podman', pkg: 'podman' },
  { command: 'runc', pkg: 'runc' },
  { command: 'openssl', pkg: 'openssl' },
  // The fleet tests' load balancer; they run their own haproxy processes (the package's service, if
  // the machine starts one, has no frontends).
  { command: 'haproxy', pkg: 'haproxy' },
];

export class MissingPackagesError extends Error {}

function found(command) {
  return spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0;
}

/** Installs every missing package with apt-get; throws one clear line when it cannot. */
export function ensureDebianPackages({ log = (line) => process.stderr.write(`${line}\n`) } = {}) {
  const missing = NEEDED.filter(({ command }) => !found(command)).map(({ pkg }) => pkg);
  if (missing.length === 0) return [];
  const how = `apt-get install -y ${missing.join(' ')}`;
  if (!found('apt-get') || process.getuid?.() !== 0) {
    throw new MissingPackagesError(`missing ${missing.join(', ')}: install them as root (Debian: ${how})`);
  }
  log(`installing ${missing.join(' ')} with apt-get (needed by the tests, the image and the packaging)`);
  for (const args of [['update', '-qq'], ['install', '-y', '-qq', ...missing]]) {
    const result = spawnSync('apt-get', args, { stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
    if (result.status !== 0) {
      throw new MissingPackagesError(`apt-get ${args.join(' ')} failed (exit ${result.status}): ${(result.stderr ?? '').trim().split('\n').slice(-2).join(' | ')}`);
    }
  }
  return missing;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  try {
    ensureDebianPackages();
  } catch (error) {
    console.error(error instanceof MissingPackagesError ? error.message : error);
    process.exit(1);
  }
}
