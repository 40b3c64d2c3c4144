// kube-apiserver and kube-controller-manager for the tests, built with the ordinary Go client from
// the k8s.io/kubernetes module that build/go.mod pins (go.sum checks every module) into a cache
// outside the repository, once per version: the first build downloads the modules and compiles for
// several minutes (in the background: ../background-build.ts), later runs only look.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { type BackgroundBuild, builtFile, partialPath } from '../background-build.js';

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
function kubeBinaryPath(component: KubeComponent, version = kubeVersion()): string {
  return join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'esm-kube', version, component);
}

/** The build of a component: the ordinary Go client, stamped as a release build is (/version and the compatibility version read it; helm checks kubeVersion against it). */
export function kubeBuild(component: KubeComponent, version = kubeVersion()): BackgroundBuild {
  const target = kubeBinaryPath(component, version);
  const minor = version.split('.')[1] ?? '';
  const stamp = (name: string, value: string): string => `-X k8s.io/component-base/version.${name}=${value}`;
  const ldflags = ['-s', '-w', stamp('gitVersion', version), stamp('gitMajor', '1'), stamp('gitMinor', minor), stamp('gitTreeState', 'clean')].join(' ');
  return {
    name: `${component} ${version}`,
    target,
    command: ['go', 'build', '-trimpath', '-ldflags', ldflags, '-o', partialPath(target), `k8s.io/kubernetes/cmd/${component}`],
    cwd: BUILD_MODULE,
    env: { ...process.env, CGO_ENABLED: '0' },
  };
}

/** The component's binary: from the cache, after the background build the test set-up started, or built here. */
export function kubeBinary(component: KubeComponent): Promise<string> {
  return builtFile(kubeBinaryPath(component), () => buildHere(kubeBuild(component)));
}

/** Builds in this process; throws one clear line when Go is missing or the build fails. */
function buildHere(build: BackgroundBuild): string {
  const go = spawnSync('go', ['version'], { encoding: 'utf8' });
  if (go.error !== undefined || go.status !== 0)
    throw new Error(`go is not installed: the Kubernetes API server tests build ${build.name} with it (${go.error?.message ?? go.stderr})`);
  mkdirSync(join(build.target, '..'), { recursive: true });
  const [file, ...args] = build.command;
  const result = spawnSync('nice', ['-n', '10', file ?? 'go', ...args], {
    cwd: build.cwd,
    encoding: 'utf8',
    env: build.env,
    timeout: 40 * 60_000,
    maxBuffer: 16 * 1024 * 1024,
  });
  const partial = partialPath(build.target);
  if (result.status !== 0 || !existsSync(partial)) {
    rmSync(partial, { force: true });
    throw new Error(`${build.command.join(' ')} failed (${result.error?.message ?? `exit ${result.status}`}): ${(result.stderr ?? '').slice(-1_500)}`);
  }
  renameSync(partial, build.target);
  return build.target;
}
