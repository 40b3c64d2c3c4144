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
import { BUILD_PACKAGES, MissingPackagesError, ensureArm64Sysroot, ensureDebianPackages, requireRoot, unpackDebianPackages } from '../../scripts/debian.mjs';

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
 * etcd for the tests' Kubernetes API server: Debian 12's etcd-server at exactly this version,
 * downloaded and unpacked, never installed (the package would start a system service).
 */
export const ETCD_PACKAGE = { 'etcd-server': '3.4.23-4+b4' };
/** Where the unpacked etcd-server lives: outside the repository, one directory per version. */
export const ETCD_CACHE = process.env.ESM_ETCD_CACHE ?? '/var/cache/esm-etcd';

/** The path of the etcd binary from ETCD_PACKAGE, unpacked once per version; later calls only look. */
export function ensureEtcd({ log = (line) => process.stderr.write(`${line}\n`) } = {}) {
  const wanted = Object.entries(ETCD_PACKAGE).map(([name, version]) => `${name}=${version}`);
  const root = join(ETCD_CACHE, wanted.join('+').replace(/[^A-Za-z0-9._+-]/g, '_'));
  const etcd = join(root, 'usr/bin/etcd');
  if (existsSync(etcd)) return etcd;
  requireRoot(`etcd is missing from ${root}: run node test/setup/debian.mjs as root once (it runs apt-get download ${wanted.join(' ')})`);
  unpackDebianPackages(wanted, ETCD_CACHE, root, 'ETCD_PACKAGE in test/setup/debian.mjs');
  log(`${root}: etcd from ${wanted.join(' ')}`);
  return etcd;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  try {
    ensureTestPackages();
    ensureArm64Sysroot();
    ensureEtcd();
  } catch (error) {
    console.error(error instanceof MissingPackagesError ? error.message : error);
    process.exit(1);
  }
}
