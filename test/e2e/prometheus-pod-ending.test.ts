// Drains that end their pods, on a real Prometheus scraping at a realistic 15 s with the chart's
// rules, as the chart's PodMonitor has the Prometheus Operator scrape them (its interval, path and
// target labels). Each manager has the chart's final-scrape settings and is stopped as kubelet
// stops the sidecar: SIGTERM once its preStop hook returned, SIGKILL when the grace period left
// runs out. Ten pods of each alerting kind must raise their alert, each for its own pod, and ten
// clean drains none: a pod-ending drain is read before its manager is gone.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NAMESPACE, RELEASE, renderChart } from '../support/chart/helm.js';
import { findObjects, readPod } from '../support/chart/manifests.js';
import { cleanEnv, type RunningCli, type RunResult, startCli, tempDir } from '../support/cli.js';
import { killContainer } from '../support/kubelet/rules.js';
import { type DrainOutcome, startObservedDrain } from '../support/observed-drain.js';
import { pollFor, within } from '../support/poll.js';
import { type PrometheusServer, startPrometheus } from '../support/prometheus-server.js';
import { request } from '../support/protocols/clients.js';

const SCRAPE_INTERVAL = '15s';
const SCRAPE_INTERVAL_MS = 15_000;
const PODS_PER_KIND = 10;
/** Each kind of pod-ending drain, and the alert its pods must raise (none for a clean drain). */
const KINDS: ReadonlyArray<{ kind: DrainOutcome | 'ready-timeout'; alert: string | undefined }> = [
  { kind: 'drained', alert: undefined },
  { kind: 'timeout', alert: 'EnvoyDrainTimedOut' },
  { kind: 'unknown-count', alert: 'EnvoyDrainUnknownCount' },
  { kind: 'unreachable', alert: 'EnvoyReleasedUnreachable' },
  { kind: 'ready-timeout', alert: 'EnvoyPrestopReadyTimeout' },
];
/** Hooks running at once: the drains' own timings are short, and a starved hook would change its result. */
const HOOKS_AT_ONCE = 4;

interface EndingPod {
  readonly name: string;
  readonly alert: string | undefined;
  readonly manager: RunningCli;
  readonly port: number;
  /** The sidecar's preStop hook (with Envoy's own running at once), as kubelet runs it. */
  readonly preStop: () => Promise<unknown>;
}

const cleanups: Array<() => unknown> = [];
const defer = (cleanup: () => unknown): void => void cleanups.push(cleanup);
let prometheus: PrometheusServer;
let pods: EndingPod[];
let stopped: RunResult[];

beforeAll(async () => {
  const objects = await renderChart({
    values: {
      metrics: {
        podMonitor: { enabled: true, interval: SCRAPE_INTERVAL },
        rulesConfigMap: { enabled: true },
        alerts: { window: '3m', for: '0s' },
      },
    },
  });
  const pod = readPod(objects);
  const graceS = pod.podSpec.terminationGracePeriodSeconds ?? 30;
  // The chart's final-scrape settings, as the manager's container gets them.
  const env = Object.fromEntries(
    ['ENVOY_SHUTDOWN_FINAL_SCRAPE_TIMEOUT', 'ENVOY_SHUTDOWN_TERMINATION_GRACE_PERIOD'].map((name) => [name, pod.sidecarEnv[name] ?? '']),
  );
  expect(env).toEqual({ ENVOY_SHUTDOWN_FINAL_SCRAPE_TIMEOUT: '20s', ENVOY_SHUTDOWN_TERMINATION_GRACE_PERIOD: `${graceS}s` });

  pods = [];
  for (const { kind, alert } of KINDS) {
    for (let index = 0; index < PODS_PER_KIND; index += 1) {
      const name = `${kind}-${index}`;
      if (kind === 'ready-timeout') pods.push(await heldPod(name, alert, env));
      else {
        const observed = await startObservedDrain(defer, { env });
        pods.push({ name, alert, manager: observed.manager, port: observed.managerPort, preStop: () => observed.drain(kind) });
      }
    }
  }
  const rules = objects.find((o) => o.kind === 'ConfigMap' && o.metadata.name.endsWith('-rules')) as { data?: Record<string, string> } | undefined;
  const monitor = scrapeOf(findObjects<PodMonitor>(objects, 'PodMonitor')[0], pod.deployment.spec?.template.metadata?.labels ?? {});
  const targets = pods.map((p) => ({ port: p.port, labels: { ...monitor.labels, namespace: NAMESPACE, pod: p.name } }));
  prometheus = await startPrometheus(targets, rules?.data?.['envoy-shutdown-manager.rules.yaml'] ?? '', SCRAPE_INTERVAL_MS);
  defer(() => prometheus.stop());
  // Every manager scraped before its drain: the counters' rise, not their first sample, is what the rules see.
  await pollFor(
    'every manager scraped',
    async () =>
      (await prometheus.query('count(envoy_shutdown_manager_drains_total{result="drained"} == 0)'))[0]?.value[1] === String(pods.length) ? true : undefined,
    { timeoutMs: 4 * SCRAPE_INTERVAL_MS },
  );

  // kubelet's killContainer for each sidecar: its hook, then SIGTERM, then SIGKILL with what is left.
  const hooks = limit(HOOKS_AT_ONCE);
  stopped = await Promise.all(
    pods.map(async (p) => {
      await killContainer(graceS, { preStop: () => hooks(p.preStop), stop: (timeoutS) => stopContainer(p.manager, timeoutS) });
      return p.manager.result;
    }),
  );
}, 300_000);

afterAll(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('pod-ending drains, on a real Prometheus scraping every 15 s', () => {
  it('every manager stayed for the scrape that read its final counters, and exited by itself', () => {
    const exits = stopped.map((result, index) => `${pods[index]?.name} ${result.code} ${result.signal}`);
    expect(exits).toEqual(pods.map((p) => `${p.name} 0 null`));
    for (const result of stopped) expect(result.logs.map((line) => line.msg)).toContain('final scrape: the final counters were read');
  });

  it(
    'raises each alert for every pod of its kind, and none for a clean drain',
    async () => {
      const expected = pods.flatMap((p) => (p.alert === undefined ? [] : [`${p.alert} ${p.name}`])).sort();
      let seen: string[] = [];
      await pollFor(
        'the expected alerts',
        async () => {
          seen = (await prometheus.firing()).map((a) => `${a.alertname} ${a.pod}`).sort();
          return JSON.stringify(seen) === JSON.stringify(expected) ? true : undefined;
        },
        { timeoutMs: 4 * SCRAPE_INTERVAL_MS, lastSeen: () => `${seen.length} firing: ${seen.join(', ')}` },
      ).catch(() => undefined);
      expect(seen).toEqual(expected);
      // Each keeps the labels the PodMonitor gives the pod's series.
      for (const alert of await prometheus.firing()) expect(alert).toMatchObject({ namespace: NAMESPACE, app_kubernetes_io_instance: RELEASE });
    },
    8 * SCRAPE_INTERVAL_MS,
  );
});

interface PodMonitor {
  readonly spec: {
    readonly podTargetLabels?: readonly string[];
    readonly podMetricsEndpoints: ReadonlyArray<{ port: string; path: string; interval?: string }>;
  };
}

/**
 * What the Prometheus Operator makes of the chart's PodMonitor, checked against what this test
 * runs: the manager's port and path at the test's interval, and the target labels it copies from
 * the pod's labels (podTargetLabels, named as Prometheus sanitizes them).
 */
function scrapeOf(monitor: PodMonitor | undefined, podLabels: Readonly<Record<string, string>>): { labels: Record<string, string> } {
  expect(monitor?.spec.podMetricsEndpoints).toEqual([{ port: 'shutdown-mgr', path: '/metrics', interval: SCRAPE_INTERVAL }]);
  const labels = (monitor?.spec.podTargetLabels ?? []).map((name) => [name.replace(/[^a-zA-Z0-9_]/g, '_'), podLabels[name] ?? ''] as const);
  return { labels: Object.fromEntries(labels) };
}

/** A manager whose waiter gets 500 at its ready timeout: the sidecar's hook outlives it and never writes the ready file. */
async function heldPod(name: string, alert: string | undefined, env: Record<string, string>): Promise<EndingPod> {
  const dir = tempDir();
  defer(dir.cleanup);
  const manager = startCli(['shutdown-manager', '--port', '0', '--ready-file', `${dir.path}/ready`, '--ready-timeout', '1s'], cleanEnv(env));
  defer(() => {
    manager.child.kill('SIGKILL');
    return manager.result.catch(() => undefined);
  });
  const port = (await manager.waitForLog((line) => line.msg === 'shutdown manager listening')).port as number;
  const preStop = async (): Promise<void> => {
    const envoyHook = await request({ port }, '/shutdown/ready');
    expect(envoyHook.status).toBe(500);
  };
  return { name, alert, manager, port, preStop };
}

/** StopContainer (the kubelet stand-in's rule): SIGTERM, and SIGKILL if the process still runs `timeoutS` later. */
async function stopContainer(manager: RunningCli, timeoutS: number): Promise<void> {
  manager.child.kill('SIGTERM');
  if (
    !(await within(
      manager.result.catch(() => undefined),
      timeoutS * 1_000,
    ))
  )
    manager.child.kill('SIGKILL');
  await manager.result.catch(() => undefined);
}

/** Runs at most `n` of the tasks given to it at once. */
function limit(n: number): <T>(task: () => Promise<T>) => Promise<T> {
  let running = 0;
  const queue: Array<() => void> = [];
  return async (task) => {
    if (running >= n) await new Promise<void>((resolve) => queue.push(resolve));
    running += 1;
    try {
      return await task();
    } finally {
      running -= 1;
      queue.shift()?.();
    }
  };
}
