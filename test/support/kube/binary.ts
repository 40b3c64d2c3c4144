// kube-apiserver and kube-controller-manager for the tests, built with the ordinary Go client from
// the k8s.io/kubernetes module that build/go.mod pins (go.sum checks every module) into a cache
// outside the repository, once per version: the first build downloads the modules and compiles for
// several minutes, later runs only look.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

const BUILD_MODULE = resolve('test/support/kube/build');

/** The components the tests run, each a `tool` of build/go.mod. */
export type KubeComponent = 'kube-apiserver' | 'kube-controller-manager';

/** The k8s.io/kubernetes version build/go.mod requires: the one pin, read from there. */
export function kubeVersion(): string {
  const version = /^(?:require)?\s*k8s\.io\/kubernetes (v1\.\d+\.\d+)\b/m.exec(readFileSync(join(BUILD_MODULE, 'go.mod'), 'utf8'));
  if (version?.[1] === undefined) throw new Error(`${BUILD_MODULE}/go.mod requires no k8s.io/kubernetes version`);
  return version[1];
}

/** Where a version's component lives: a new pin builds anew. */
export function kubeBinaryPath(component: KubeComponent, version = kubeVersion()): string {
  return join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'esm-kube', version, component);
}

/** Builds the component when the cache has none; throws one clear line when Go is missing or the build fails. */
export function ensureKubeBinary(component: KubeComponent, log: (line: string) => void = () => {}): string {
  const version = kubeVersion();
  const binary = kubeBinaryPath(component, version);
  if (existsSync(binary)) return binary;
  const pkg = `k8s.io/kubernetes/cmd/${component}`;
  const go = spawnSync('go', ['version'], { encoding: 'utf8' });
  if (go.error !== undefined || go.status !== 0)
    throw new Error(`go is not installed: the Kubernetes API server tests build ${pkg}@${version} with it (${go.error?.message ?? go.stderr})`);
  log(`building ${component} ${version} into ${binary} (once per version; the first build takes minutes)`);
  mkdirSync(join(binary, '..'), { recursive: true });
  // Another run may be building the same file: each writes its own partial file and renames it into place.
  const partial = `${binary}.partial-${process.pid}`;
  // What the release build stamps: /version and the compatibility version read it (helm checks kubeVersion against it).
  const minor = version.split('.')[1] ?? '';
  const stamp = (name: string, value: string): string => `-X k8s.io/component-base/version.${name}=${value}`;
  const ldflags = ['-s', '-w', stamp('gitVersion', version), stamp('gitMajor', '1'), stamp('gitMinor', minor), stamp('gitTreeState', 'clean')].join(' ');
  const started = Date.now();
  const result = spawnSync('nice', ['-n', '10', 'go', 'build', '-trimpath', '-ldflags', ldflags, '-o', partial, pkg], {
    cwd: BUILD_MODULE,
    encoding: 'utf8',
    env: { ...process.env, CGO_ENABLED: '0' },
    timeout: 40 * 60_000,
    maxBuffer: 16 * 1024 * 1024,
  });
  if (result.status !== 0 || !existsSync(partial)) {
    rmSync(partial, { force: true });
    throw new Error(`go build ${pkg}@${version} failed (${result.error?.message ?? `exit ${result.status}`}): ${(result.stderr ?? '').slice(-1_500)}`);
  }
  renameSync(partial, binary);
  log(`built ${component} ${version} in ${Math.round((Date.now() - started) / 1_000)} s`);
  return binary;
}

export const ensureKubeApiserver = (log?: (line: string) => void): string => ensureKubeBinary('kube-apiserver', log);
export const ensureKubeControllerManager = (log?: (line: string) => void): string => ensureKubeBinary('kube-controller-manager', log);
