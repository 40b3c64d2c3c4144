// The chart's alert rules and dashboard, on a real Prometheus scraping real managers through real
// drains of real Envoy: one drain of each kind, each in its own manager (its own "pod"); each
// alert fires for its own case and for no other, and every dashboard query returns its series.

import type { IConfigMap } from 'kubernetes-models/v1';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { renderChart } from '../support/chart/helm.js';
import { findObjects } from '../support/chart/manifests.js';
import { cleanEnv, startCli, tempDir } from '../support/cli.js';
import { type DrainOutcome, type ObservedDrain, SLOW_DRAIN_MS, startObservedDrain } from '../support/observed-drain.js';
import { pollFor } from '../support/poll.js';
import { type PrometheusServer, startPrometheus } from '../support/prometheus-server.js';
import { request } from '../support/protocols/clients.js';

const NAMESPACE = 'edge-ns';
const RELEASE = 'edge';
/** The chart's drain timeout here: EnvoyDrainNearTimeout fires above half of it, which a slow drain passes and a quick one does not. */
const CHART_DRAIN_TIMEOUT_S = 6;
const NEAR_TIMEOUT_RATIO = 0.5;
/** Each drained pod, and the one alert its drain must raise (none for a quick, complete drain). */
const DRAINS: ReadonlyArray<{ pod: string; outcome: DrainOutcome; alert: string | undefined }> = [
  { pod: 'drained', outcome: 'drained', alert: undefined },
  { pod: 'slow-drained', outcome: 'slow-drained', alert: 'EnvoyDrainNearTimeout' },
  { pod: 'timed-out', outcome: 'timeout', alert: 'EnvoyDrainTimedOut' },
  { pod: 'unknown-count', outcome: 'unknown-count', alert: 'EnvoyDrainUnknownCount' },
  { pod: 'unreachable', outcome: 'unreachable', alert: 'EnvoyReleasedUnreachable' },
];
/** A manager whose waiter gets 500 at its ready timeout: no drain ever reports. */
const READY_TIMEOUT_POD = 'ready-timeout';

const cleanups: Array<() => unknown> = [];
const defer = (cleanup: () => unknown): void => void cleanups.push(cleanup);
let prometheus: PrometheusServer;
let dashboard: { panels: Array<{ title: string; targets: Array<{ expr: string }> }>; templating: { list: Array<{ name: string; query: unknown }> } };

beforeAll(async () => {
  const objects = await renderChart({
    values: {
      shutdown: { drainTimeout: CHART_DRAIN_TIMEOUT_S, minDrainDuration: 1 },
      metrics: { rulesConfigMap: { enabled: true }, dashboard: { enabled: true }, alerts: { window: '1m', for: '0s', nearTimeoutRatio: NEAR_TIMEOUT_RATIO } },
    },
  });
  const data = (suffix: string): Record<string, string> =>
    findObjects<IConfigMap>(objects, 'ConfigMap').find((c) => c.metadata?.name?.endsWith(suffix))?.data ?? {};
  const rules = data('-rules')['envoy-shutdown-manager.rules.yaml'] ?? '';
  dashboard = JSON.parse(data('-dashboard')['envoy-shutdown-manager.json'] ?? '{}') as typeof dashboard;

  const observed = new Map<string, ObservedDrain>();
  for (const { pod } of DRAINS) observed.set(pod, await startObservedDrain(defer));
  const dir = tempDir();
  defer(dir.cleanup);
  const held = startCli(['shutdown-manager', '--port', '0', '--ready-file', `${dir.path}/ready`, '--ready-timeout', '1s'], cleanEnv());
  defer(() => held.child.kill('SIGKILL'));
  const heldPort = (await held.waitForLog((line) => line.msg === 'shutdown manager listening')).port as number;

  const labels = (pod: string): Record<string, string> => ({ pod, namespace: NAMESPACE, app_kubernetes_io_instance: RELEASE });
  const targets = [
    ...[...observed].map(([pod, drain]) => ({ port: drain.managerPort, labels: labels(pod) })),
    { port: heldPort, labels: labels(READY_TIMEOUT_POD) },
  ];
  prometheus = await startPrometheus(targets, rules);
  defer(() => prometheus.stop());
  // Every manager scraped before any drain: the counters' rise, not their first sample, is what the rules see.
  await pollFor(
    'every manager scraped',
    async () =>
      (await prometheus.query('count(envoy_shutdown_manager_drains_total{result="drained"} == 0)'))[0]?.value[1] === String(targets.length) ? true : undefined,
    { timeoutMs: 30_000 },
  );

  await Promise.all([
    ...DRAINS.map(({ pod, outcome }) => observed.get(pod)?.drain(outcome)),
    request({ port: heldPort }, '/shutdown/ready').then((answer) => expect(answer.status).toBe(500)),
  ]);
  // Scraped since: every drain counted, and the 500.
  await pollFor(
    'the drains scraped',
    async () => {
      const drains = await prometheus.query('sum(envoy_shutdown_manager_drains_total)');
      const answered500 = await prometheus.query('sum(envoy_shutdown_manager_handshakes_total{code="500"})');
      return drains[0]?.value[1] === String(DRAINS.length) && answered500[0]?.value[1] === '1' ? true : undefined;
    },
    { timeoutMs: 30_000 },
  );
}, 120_000);

afterAll(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe("the chart's alerts, on a real Prometheus", () => {
  it('fires each alert for its own case and for no other', async () => {
    const expected = [
      ...DRAINS.flatMap(({ pod, alert }) => (alert === undefined ? [] : [`${alert} ${pod}`])),
      `EnvoyPrestopReadyTimeout ${READY_TIMEOUT_POD}`,
    ].sort();
    let seen: string[] = [];
    const firing = async (): Promise<string[]> => (seen = (await prometheus.firing()).map((a) => `${a.alertname} ${a.pod}`).sort());
    // Rules are evaluated every 250 ms; the set grows to the expected one and nothing else.
    await pollFor('the expected alerts', async () => (JSON.stringify(await firing()) === JSON.stringify(expected) ? true : undefined), {
      timeoutMs: 20_000,
      lastSeen: () => seen.join(', '),
    }).catch(() => undefined);
    expect(seen).toEqual(expected);
    // Each keeps the pod's labels and says what to do.
    const alerts = await prometheus.firing();
    for (const alert of alerts) expect(alert).toMatchObject({ namespace: NAMESPACE, app_kubernetes_io_instance: RELEASE, severity: 'warning' });
    // The slow drain really passed the threshold, the quick one did not.
    const mean = await prometheus.query('envoy_shutdown_manager_drain_duration_seconds_sum{result="drained"}');
    const byPod = Object.fromEntries(mean.map((s) => [s.metric.pod, Number(s.value[1])]));
    expect(byPod['slow-drained']).toBeGreaterThanOrEqual(SLOW_DRAIN_MS / 1000);
    expect(byPod.drained).toBeLessThan(NEAR_TIMEOUT_RATIO * CHART_DRAIN_TIMEOUT_S);
  });

  it('records the fleet figures the recording rules name', async () => {
    const recorded = await pollFor(
      'the recording rules evaluated',
      async () => {
        const series = await prometheus.query('{__name__=~"namespace.*:envoy_shutdown_manager_.*"}');
        return new Set(series.map((s) => s.metric.__name__)).size === 3 ? series : undefined;
      },
      { timeoutMs: 10_000 },
    );
    const names = [...new Set(recorded.map((s) => s.metric.__name__))].sort();
    expect(names).toEqual([
      'namespace:envoy_shutdown_manager_drain_duration_seconds:p90_1m',
      'namespace:envoy_shutdown_manager_released_after_last_connection_seconds:p90_1m',
      'namespace_result:envoy_shutdown_manager_drains:increase1m',
    ]);
  });
});

describe("the chart's dashboard, on the same Prometheus", () => {
  /** Grafana's variables as an "All" selection and a time range of the last ten minutes. */
  const asGrafana = (expr: string): string =>
    expr.replaceAll('$namespace', '.*').replaceAll('$release', '.*').replaceAll('$__range', '10m').replaceAll('$__rate_interval', '1m');

  it('answers every panel query with series that hold numbers', async () => {
    expect(dashboard.panels.length).toBeGreaterThan(0);
    for (const panel of dashboard.panels) {
      for (const target of panel.targets) {
        const series = await prometheus.query(asGrafana(target.expr));
        expect(series.length, `${panel.title}: ${target.expr}`).toBeGreaterThan(0);
        expect(
          series.some((s) => Number.isFinite(Number(s.value[1]))),
          `${panel.title}: only NaN`,
        ).toBe(true);
      }
    }
  });

  it("offers the namespace and the release as variables, from the managers' series", async () => {
    const variable = (name: string): string => {
      const query = dashboard.templating.list.find((v) => v.name === name)?.query as { query: string } | undefined;
      return query?.query ?? '';
    };
    const labelValues = /^label_values\((.*), (\w+)\)$/;
    const [, nsMatch = '', nsLabel = ''] = labelValues.exec(variable('namespace')) ?? [];
    const [, releaseMatch = '', releaseLabel = ''] = labelValues.exec(variable('release')) ?? [];
    expect(await prometheus.labelValues(nsLabel, nsMatch)).toEqual([NAMESPACE]);
    expect(await prometheus.labelValues(releaseLabel, asGrafana(releaseMatch))).toEqual([RELEASE]);
  });
});

// Keeps the rules file well-formed YAML for Prometheus' own loader: parsed here as Prometheus reads it.
describe('the rules file', () => {
  it('is one YAML document of groups', async () => {
    const objects = await renderChart({ values: { metrics: { rulesConfigMap: { enabled: true } } } });
    const file =
      findObjects<IConfigMap>(objects, 'ConfigMap').find((c) => c.metadata?.name?.endsWith('-rules'))?.data?.['envoy-shutdown-manager.rules.yaml'] ?? '';
    const groups = (parse(file) as { groups: Array<{ name: string; rules: unknown[] }> }).groups;
    expect(groups.map((g) => `${g.name} ${g.rules.length}`)).toEqual(['envoy-shutdown-manager.rules 3', 'envoy-shutdown-manager.alerts 5']);
  });
});
