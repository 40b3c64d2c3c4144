// The chart's own output, run: the rendered bootstrap becomes the Envoy stand-in, the rendered
// sidecar command and environment run the built binary, the rendered hooks are the kubelet
// stand-in's hooks, and the pod is deleted. Timeouts are shortened through chart values only.
import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { parseDuration } from '../src/duration.js';
import { LISTENER_STATS_FILTER } from '../src/envoy/stats.js';
import { IDENTITY, listeners, standInOptions, statPrefix } from './support/chart/bootstrap.js';
import { USER_CLUSTERS, USER_LISTENERS } from './support/chart/cases.js';
import { startChartPod, type ChartPod } from './support/chart/chart-pod.js';
import { renderChart, type RenderOptions } from './support/chart/helm.js';
import { ENVOY_CONTAINER, readPod, SIDECAR_CONTAINER, type RenderedPod } from './support/chart/manifests.js';
import { idleHttpConnection } from './support/clients.js';
import { adminRequest } from './support/envoy/http1-client.js';
import { EnvoyStandIn } from './support/envoy/stand-in.js';
import type { JsonLine } from './support/kubelet/container.js';
import type { Timeline } from './support/kubelet/timeline.js';
import { Traffic } from './support/traffic/traffic.js';

/** Short, fast drains: 3 s drain timeout, hence a 13 s ready timeout and a 33 s grace period. */
const FAST: Record<string, unknown> = { shutdown: { drainTimeout: 3, minDrainDuration: 0.5, checkInterval: 0.2 } };
const DRAIN_TIMEOUT_MS = 3_000;

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function start(options: RenderOptions): Promise<{ rendered: RenderedPod; chartPod: ChartPod }> {
  const rendered = readPod(await renderChart(options));
  const chartPod = await startChartPod(rendered);
  cleanups.push(() => chartPod.destroy());
  return { rendered, chartPod };
}

/** The data-plane port the stand-in listens on for the bootstrap listener with this stat prefix. */
function listenerPort(rendered: RenderedPod, chartPod: ChartPod, prefix: string): number {
  const listener = listeners(rendered.bootstrap).find((l) => statPrefix(l) === prefix);
  if (listener?.address.socket_address === undefined) throw new Error(`no listener ${prefix}`);
  return chartPod.ports.port(listener.address.socket_address.port_value);
}

const adminCalls = (chartPod: ChartPod): string[] =>
  chartPod.pod
    .container(ENVOY_CONTAINER)
    .lines.filter((line) => line['event'] === 'admin-call')
    .map((line) => `${String(line['method'])} ${String(line['path'])}${line['query'] === '' ? '' : `?${String(line['query'])}`}`);

const sidecarLog = (chartPod: ChartPod, msg: string): JsonLine | undefined => chartPod.pod.container(SIDECAR_CONTAINER).logs().find((line) => line['msg'] === msg);

/** The termination went as the chart means it to: drained, Envoy released by its hook, no SIGKILL, in time. */
function expectCleanTermination(timeline: Timeline, rendered: RenderedPod, chartPod: ChartPod): void {
  const sidecar = chartPod.pod.container(SIDECAR_CONTAINER);
  const story = `${timeline.format()}\nsidecar log:\n${sidecar.logs().map((l) => JSON.stringify(l)).join('\n')}\nsidecar stderr: ${sidecar.stderr}`;
  const sidecarHook = timeline.find('prestop-end', SIDECAR_CONTAINER);
  expect(sidecarHook?.detail, story).toBe('exit 0');
  const envoyHook = timeline.find('prestop-end', ENVOY_CONTAINER);
  expect(envoyHook?.detail, story).toBe('HTTP 200');
  expect(timeline.find('sigterm', ENVOY_CONTAINER)?.t).toBeGreaterThanOrEqual(envoyHook?.t ?? Infinity);
  // Released by the drain (the ready file), which lasts at least the minimum drain duration.
  const minDrainMs = parseDuration(rendered.sidecarEnv['ENVOY_SHUTDOWN_MIN_DRAIN_DURATION'] ?? '');
  expect(envoyHook?.t).toBeGreaterThanOrEqual((timeline.find('prestop-start', SIDECAR_CONTAINER)?.t ?? Infinity) + minDrainMs);
  expect(timeline.find('sigkill')).toBeUndefined();
  expect(timeline.find('grace-period-end')).toBeUndefined();
  expect(timeline.find('pod-gone')?.t).toBeLessThan((rendered.podSpec.terminationGracePeriodSeconds ?? 0) * 1_000);
}

describe("the rendered bootstrap, as the Envoy stand-in's options", () => {
  it('keeps every listener, its kind, drain type and health check path, the admin address and the drain flags', async () => {
    const rendered = readPod(await renderChart({ values: { listeners: USER_LISTENERS, clusters: USER_CLUSTERS } }));
    expect(standInOptions(rendered.bootstrap, rendered.envoy.args ?? [], IDENTITY)).toEqual({
      admin: { host: '127.0.0.1', port: 19000 },
      listeners: [
        { name: 'stats', kind: 'http', host: '0.0.0.0', port: 19001, drainType: 'MODIFY_ONLY' },
        { name: 'ready', kind: 'http', host: '0.0.0.0', port: 19003, drainType: 'MODIFY_ONLY', healthCheckPath: '/ready' },
        { name: 'public', kind: 'http', host: '0.0.0.0', port: 8443, drainType: 'MODIFY_ONLY' },
        { name: 'db', kind: 'tcp', host: '0.0.0.0', port: 5432, drainType: 'MODIFY_ONLY' },
      ],
      drainStrategy: 'immediate',
      drainTimeSeconds: 60,
    });
  });

  it('refuses what the stand-in does not model rather than dropping it', async () => {
    const rendered = readPod(await renderChart({ values: { envoy: { extraArgs: ['--concurrency', '4'] } } }));
    expect(() => standInOptions(rendered.bootstrap, rendered.envoy.args ?? [], IDENTITY)).toThrow(/--concurrency is not modelled/);
  });
});

describe('the chart, run by the kubelet stand-in', () => {
  it("drains with the chart's settings and ignores a scraper's keep-alive connection to the stats listener", async () => {
    const { rendered, chartPod } = await start({ values: FAST });
    const { pod } = chartPod;
    const scraper = await idleHttpConnection(listenerPort(rendered, chartPod, 'stats'), '/stats/prometheus');
    cleanups.push(() => scraper.close());
    const scraperClosed = once(scraper.socket, 'close').then(() => Date.now());
    // Envoy counts the scraper on the stats listener: without the chart's ignore list it would hold the drain.
    const admin = chartPod.sidecarEnv['ENVOY_SHUTDOWN_ADMIN_ADDRESS'] ?? '';
    const gauge = await adminRequest(admin, 'GET', '/stats?filter=^listener\\.stats\\.downstream_cx_active$&format=json');
    expect(JSON.parse(gauge.body)).toEqual({ stats: [{ name: 'listener.stats.downstream_cx_active', value: 1 }] });

    const timeline = await pod.terminate();
    expectCleanTermination(timeline, rendered, chartPod);

    const calls = adminCalls(chartPod).filter((call) => !call.includes('listener\\.stats\\.downstream_cx_active$')); // our own read above
    expect(calls[0]).toBe('POST /healthcheck/fail');
    expect(calls[1]).toBe('POST /drain_listeners?graceful&skip_exit');
    expect(calls.slice(2).length).toBeGreaterThan(0);
    for (const call of calls.slice(2)) expect(call).toBe(`GET /stats?filter=${LISTENER_STATS_FILTER}&format=json`); // --connections listeners

    // The hook ran with the rendered environment, not with the binary's defaults.
    expect(sidecarLog(chartPod, 'shutdown started')).toMatchObject({
      adminAddress: admin,
      drainTimeout: '3s',
      minDrainDuration: '500ms',
      checkInterval: '200ms',
      connections: 'listeners',
      ignoreListeners: ['stats', 'ready'],
      readyFile: chartPod.sidecarEnv['ENVOY_SHUTDOWN_READY_FILE'],
    });
    // Drained at the minimum drain duration, long before the drain timeout, with the scraper still connected.
    expect(sidecarLog(chartPod, 'drain finished: releasing envoy')).toMatchObject({ result: 'drained', connections: 0 });
    expect(timeline.find('prestop-end', SIDECAR_CONTAINER)?.t).toBeLessThan(DRAIN_TIMEOUT_MS);
    expect(await scraperClosed).toBeGreaterThanOrEqual(timeline.find('sigterm', ENVOY_CONTAINER)?.at ?? Infinity);
    // Envoy ran with the chart's drain flags.
    expect(chartPod.envoyOptions).toMatchObject({ drainStrategy: 'immediate', drainTimeSeconds: 3 });
  });

  it('drains over the admin Unix socket in the emptyDir both containers mount', async () => {
    const { rendered, chartPod } = await start({ values: FAST, set: ['admin.unixSocket.enabled=true'] });
    const socket = rendered.bootstrap.admin?.address?.pipe?.path ?? '';
    expect(chartPod.envoyOptions.admin).toEqual({ unixSocket: chartPod.envoyPath(socket) });
    expect(chartPod.sidecarEnv['ENVOY_SHUTDOWN_ADMIN_ADDRESS']).toBe(`unix:${chartPod.envoyPath(socket)}`);

    const timeline = await chartPod.pod.terminate();
    expectCleanTermination(timeline, rendered, chartPod);
    expect(adminCalls(chartPod).slice(0, 2)).toEqual(['POST /healthcheck/fail', 'POST /drain_listeners?graceful&skip_exit']);
    expect(sidecarLog(chartPod, 'drain finished: releasing envoy')).toMatchObject({ result: 'drained' });
  });

  it('loses no request under light load while the load balancer moves clients to another pod', async () => {
    const { rendered, chartPod } = await start({ values: { shutdown: { drainTimeout: 8, minDrainDuration: 1, checkInterval: 0.2 } } });
    const healthy = await EnvoyStandIn.start({ drainStrategy: 'immediate', listeners: [{ name: 'ingress', kind: 'http', drainType: 'MODIFY_ONLY' }] });
    cleanups.push(() => healthy.close());
    const traffic = await Traffic.start({
      terminating: { host: '127.0.0.1', port: listenerPort(rendered, chartPod, 'ingress') },
      healthy: { host: '127.0.0.1', port: healthy.listenerPort('ingress') },
      http1Clients: 2,
      http2Clients: 1,
      streamsPerSession: 1,
      thinkTimeMs: 10,
    });
    cleanups.push(() => traffic.stop());
    const before = traffic.stats;

    traffic.terminationStarted(300); // the LB keeps sending new connections for 300 ms, well inside the 1 s minimum drain
    const timeline = await chartPod.pod.terminate();
    const stats = await traffic.stop();

    expectCleanTermination(timeline, rendered, chartPod);
    expect(stats.failures).toEqual([]);
    expect(stats.requests.terminating).toBeGreaterThan(before.requests.terminating);
    expect(stats.requests.healthy).toBeGreaterThan(0);
    expect(sidecarLog(chartPod, 'drain finished: releasing envoy')).toMatchObject({ result: 'drained', connections: 0 });
  });
});
