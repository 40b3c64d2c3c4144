// The Debian packages the run needs (strip, podman, runc, haproxy, qemu, …), installed by
// test/setup/debian.mjs when missing, the arm64 libraries the emulated tests use, the etcd the
// Kubernetes API server tests run and the Prometheus the alert rules' tests run: the global setup
// goes through here so `npm test` is the only set-up.
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

interface DebianScript {
  ensureTestPackages(): string[];
  ensureArm64Sysroot(): string;
  ensureEtcd(): string;
  ensurePrometheus(): string;
}

async function debianScript(): Promise<DebianScript> {
  // A computed specifier: TypeScript cannot type a .mjs without declarations, so the shape is checked here.
  const script = (await import(pathToFileURL(resolve('test/setup/debian.mjs')).href)) as Partial<DebianScript>;
  const { ensureTestPackages, ensureArm64Sysroot, ensureEtcd, ensurePrometheus } = script;
  if (
    typeof ensureTestPackages !== 'function' ||
    typeof ensureArm64Sysroot !== 'function' ||
    typeof ensureEtcd !== 'function' ||
    typeof ensurePrometheus !== 'function'
  ) {
    throw new Error('test/setup/debian.mjs no longer exports ensureTestPackages, ensureArm64Sysroot, ensureEtcd and ensurePrometheus');
  }
  return { ensureTestPackages, ensureArm64Sysroot, ensureEtcd, ensurePrometheus };
}

export async function ensureSystemPackages(): Promise<void> {
  const script = await debianScript();
  script.ensureTestPackages();
  script.ensureArm64Sysroot();
  script.ensureEtcd();
  script.ensurePrometheus();
}

/** The prometheus binary Debian's prometheus package brings, promtool beside it (unpacked once, outside the repository). */
export async function prometheusBinary(): Promise<string> {
  return (await debianScript()).ensurePrometheus();
}

/** The etcd binary Debian's etcd-server package brings (unpacked once, outside the repository). */
export async function etcdBinary(): Promise<string> {
  return (await debianScript()).ensureEtcd();
}
