// Installs what a test run needs from Debian when it is missing, so `npm ci && npm test` stays the
// only set-up on a fresh Debian machine: everything the build needs (scripts/debian.mjs: strip,
// podman with runc, qemu-aarch64-static, the arm64 libraries), and for the tests alone openssl (the
// protocol and peer-fixture tests' certificates), haproxy (the fleet tests), skopeo (the release
// test), h2load (the connection-scale test) and etcd (the Kubernetes API server tests: unpacked, pinned by version, cached outside the
// repository). Elsewhere, or without root, it says exactly what to install instead of trying.
//
//   node test/setup/debian.mjs     # installs what is missing, prints nothing when all is there
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { BUILD_PACKAGES, ensureArm64Sysroot, ensureDebianPackages, MissingPackagesError, requireRoot, unpackDebianPackages } from '../../scripts/debian.mjs';

/** Each command only the tests need, and the package that brings it. */
const TEST_PACKAGES = [
  { command: 'openssl', pkg: 'openssl' },
  // The fleet tests' load balancer; they run their own haproxy processes (the package's service, if
  // the machine starts one, has no frontends).
  { command: 'haproxy', pkg: 'haproxy' },
  // Reads the release's OCI archive as a registry client would (the release test copies it).
  { command: 'skopeo', pkg: 'skopeo' },
  // h2load, the load generator of the connection-scale test (10,000 HTTP/1.1 and HTTP/2 connections).
  { command: 'h2load', pkg: 'nghttp2-client' },
];

/** The build's packages and the tests' own, in one apt-get run. */
export function ensureTestPackages(options = {}) {
  return ensureDebianPackages({ ...options, needed: [...BUILD_PACKAGES, ...TEST_PACKAGES], purpose: 'the tests, the image and the packaging' });
}

export { ensureArm64Sysroot };

/**
 * Tools the tests run from Debian packages downloaded at exactly these versions and unpacked,
 * never installed (each package would start a system service): etcd for the Kubernetes API server
 * tests, Prometheus (and promtool) for the alert rules' and dashboard's tests.
 */
export const UNPACKED_TOOLS = {
  etcd: { packages: { 'etcd-server': '3.4.23-4+b4' }, binary: 'usr/bin/etcd' },
  prometheus: { packages: { prometheus: '2.42.0+ds-5+deb12u1' }, binary: 'usr/bin/prometheus' },
};
/** Where the unpacked tools live: outside the repository, one directory per version. */
export const UNPACKED_CACHE = process.env.ESM_UNPACKED_CACHE ?? '/var/cache/esm-debian-tools';

/** The path of a tool's binary (`tool` keys UNPACKED_TOOLS), unpacked once per version; later calls only look. */
export function ensureUnpacked(tool, { log = (line) => process.stderr.write(`${line}\n`) } = {}) {
  const { packages, binary } = UNPACKED_TOOLS[tool];
  const wanted = Object.entries(packages).map(([name, version]) => `${name}=${version}`);
  const root = join(UNPACKED_CACHE, wanted.join('+').replace(/[^A-Za-z0-9._+-]/g, '_'));
  const path = join(root, binary);
  if (existsSync(path)) return path;
  requireRoot(`${tool} is missing from ${root}: run node test/setup/debian.mjs as root once (it runs apt-get download ${wanted.join(' ')})`);
  unpackDebianPackages(wanted, UNPACKED_CACHE, root, `UNPACKED_TOOLS.${tool} in test/setup/debian.mjs`);
  log(`${root}: ${tool} from ${wanted.join(' ')}`);
  return path;
}

export function ensureEtcd(options) {
  return ensureUnpacked('etcd', options);
}

export function ensurePrometheus(options) {
  return ensureUnpacked('prometheus', options);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  try {
    ensureTestPackages();
    ensureArm64Sysroot();
    ensureEtcd();
    ensurePrometheus();
  } catch (error) {
    console.error(error instanceof MissingPackagesError ? error.message : error);
    process.exit(1);
  }
}
