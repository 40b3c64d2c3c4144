// A real Prometheus (Debian's package, unpacked by test/setup/debian.mjs) on loopback: it scrapes
// the given targets and evaluates the given rules file at the given interval (FAST_MS unless told),
// and answers PromQL through its HTTP API. Stopped and its data directory removed by the caller's cleanup.
import { spawn, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { stringify } from 'yaml';
import { writeFileAtomicallySync } from '../../src/handoff/atomic-file.js';
import { tempDir } from './cli.js';
import { pollUntil } from './poll.js';
import { freePort } from './ports.js';
import { prometheusBinary } from './system-packages.js';

/** Scrapes and rule evaluations: fast, so an alert fires within a second or two of its drain. */
const FAST_MS = 250;
/** Prometheus' own default scrape timeout; never longer than the interval. */
const SCRAPE_TIMEOUT_MS = 10_000;

export interface ScrapeTarget {
  readonly port: number;
  /** Target labels, as a PodMonitor gives them: pod, namespace, app_kubernetes_io_instance. */
  readonly labels: Readonly<Record<string, string>>;
}

export interface PrometheusServer {
  /** An instant query; the result vector. */
  query(promql: string): Promise<Array<{ metric: Record<string, string>; value: [number, string] }>>;
  /** The alerts firing now, each as its labels. */
  firing(): Promise<Array<Record<string, string>>>;
  /** The values of a label over the series `match` selects (what Grafana's label_values() asks). */
  labelValues(label: string, match: string): Promise<string[]>;
  /** Replaces the targets, as a PodMonitor's discovery follows pods that come and go (Prometheus watches the file). */
  setTargets(targets: readonly ScrapeTarget[]): void;
  stop(): Promise<void>;
}

export async function startPrometheus(targets: readonly ScrapeTarget[], rulesYaml: string, intervalMs = FAST_MS): Promise<PrometheusServer> {
  const dir = tempDir('esm-prometheus-');
  const interval = `${intervalMs}ms`;
  writeFileSync(join(dir.path, 'rules.yaml'), rulesYaml);
  const targetsFile = join(dir.path, 'targets.json');
  // Whole or not at all: Prometheus may read the file at any moment.
  const setTargets = (list: readonly ScrapeTarget[]): void =>
    writeFileAtomicallySync(targetsFile, JSON.stringify(list.map((t) => ({ targets: [`127.0.0.1:${t.port}`], labels: t.labels }))));
  setTargets(targets);
  const config = {
    global: { scrape_interval: interval, scrape_timeout: `${Math.min(intervalMs, SCRAPE_TIMEOUT_MS)}ms`, evaluation_interval: interval },
    rule_files: [join(dir.path, 'rules.yaml')],
    scrape_configs: [
      {
        job_name: 'envoy-shutdown-manager',
        metrics_path: '/metrics',
        file_sd_configs: [{ files: [targetsFile] }],
      },
    ],
  };
  writeFileSync(join(dir.path, 'prometheus.yml'), stringify(config));
  const port = await freePort();
  const binary = await prometheusBinary();
  const child = spawn(
    binary,
    [
      `--config.file=${join(dir.path, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(dir.path, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=warn',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-4_000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const api = async (path: string): Promise<unknown> => {
    const answer = await fetch(`http://127.0.0.1:${port}${path}`, { signal: AbortSignal.timeout(5_000) });
    const body = (await answer.json()) as { status: string; data: unknown; error?: string };
    if (body.status !== 'success') throw new Error(`prometheus ${path}: ${body.error ?? answer.status}`);
    return body.data;
  };
  const stop = async (): Promise<void> => {
    child.kill('SIGTERM');
    await exited;
    dir.cleanup();
  };
  try {
    await pollUntil('prometheus ready', async () => (await fetch(`http://127.0.0.1:${port}/-/ready`).catch(() => undefined))?.status === 200, {
      timeoutMs: 30_000,
      everyMs: 50,
      lastSeen: () => stderr,
    });
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    query: async (promql) =>
      ((await api(`/api/v1/query?query=${encodeURIComponent(promql)}`)) as { result: Array<{ metric: Record<string, string>; value: [number, string] }> })
        .result,
    firing: async () =>
      ((await api('/api/v1/alerts')) as { alerts: Array<{ state: string; labels: Record<string, string> }> }).alerts
        .filter((a) => a.state === 'firing')
        .map((a) => a.labels),
    labelValues: async (label, match) => (await api(`/api/v1/label/${encodeURIComponent(label)}/values?match[]=${encodeURIComponent(match)}`)) as string[],
    setTargets,
    stop,
  };
}

/** `promtool check rules` (Prometheus' own validator, beside its binary) on a rules file: its report, or an error with it. */
export async function promtoolCheckRules(rulesYaml: string): Promise<string> {
  const dir = tempDir('esm-promtool-');
  try {
    const file = join(dir.path, 'rules.yaml');
    writeFileSync(file, rulesYaml);
    const run = spawnSync(join(dirname(await prometheusBinary()), 'promtool'), ['check', 'rules', file], { encoding: 'utf8', timeout: 30_000 });
    const report = `${run.stdout}${run.stderr}`;
    if (run.status !== 0) throw new Error(`promtool refused the rules: ${report}`);
    return report;
  } finally {
    dir.cleanup();
  }
}
