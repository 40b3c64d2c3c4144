// The chart's own output, run: real Envoy runs the rendered bootstrap and command line, the rendered
// sidecar command and environment (the hook token read from the rendered Secret) run the built
// binary, the rendered hooks and their headers are the kubelet stand-in's hooks, in classic or
// native-sidecar mode, and the pod is deleted (or its sidecar restarted). In sidecar-less mode the
// rendered init container runs the real single executable's `install`, and Envoy's rendered exec
// hook runs the copy it made. Timeouts are shortened through chart values only.
import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { parseDuration } from '../../src/shared/duration.js';
import { listeners, statPrefix } from '../support/chart/bootstrap.js';
import { type ChartPod, type SidecarlessChartPod, startChartPod, startSidecarlessChartPod } from '../support/chart/chart-pod.js';
import { type RenderOptions, renderChart } from '../support/chart/helm.js';
import { ENVOY_CONTAINER, INSTALL_CONTAINER, type RenderedPod, readPod, readSidecarlessPod, SIDECAR_CONTAINER } from '../support/chart/manifests.js';
import type { JsonLine } from '../support/kubelet/container.js';
import type { Timeline } from '../support/kubelet/timeline.js';
import { idleHttp1, request } from '../support/protocols/clients.js';
import { startChartEnvoy } from '../support/real-envoy/chart-envoy.js';
import { get } from '../support/real-envoy/process.js';
import { expectedStatsReads } from '../support/stats-reads.js';
import { terminateUnderLoad } from '../support/termination-run.js';
import { Traffic, type TrafficStats } from '../support/traffic/traffic.js';

/**
 * Short, fast drains: 3 s drain timeout, hence a 13 s ready timeout and a 33 s grace period; the
 * hook waits 1 s for Envoy's, so the drain-start timeout is 6 s.
 */
const FAST_SHUTDOWN = { drainTimeout: 3, minDrainDuration: 0.5, quietPeriod: 0.3, checkInterval: 0.2, envoyPrestopWait: 1 };
const FAST: Record<string, unknown> = { shutdown: FAST_SHUTDOWN };
const DRAIN_TIMEOUT_MS = 3_000;
/** Long enough for clients to be moved by the load balancer, short enough for a quick test. */
const UNDER_LOAD = { drainTimeout: 8, minDrainDuration: 1, quietPeriod: 0.5, checkInterval: 0.2, envoyPrestopWait: 1 };
/** The same drain in sidecar-less mode, where nothing waits for Envoy's hook. */
const SIDECARLESS_UNDER_LOAD = { drainTimeout: 8, minDrainDuration: 1, quietPeriod: 0.5, checkInterval: 0.2 };

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

/** The data-plane port Envoy listens on for the bootstrap listener with this stat prefix. */
function listenerPort(rendered: RenderedPod, chartPod: ChartPod, prefix: string): number {
  const listener = listeners(rendered.bootstrap).find((l) => statPrefix(l) === prefix);
  if (listener?.address.socket_address === undefined) throw new Error(`no listener ${prefix}`);
  return chartPod.ports.port(listener.address.socket_address.port_value);
}

/** The admin calls made in the pod, recorded by the tap at its admin address. */
const adminCalls = (chartPod: ChartPod | SidecarlessChartPod): string[] => chartPod.adminCalls();

const sidecarLogs = (chartPod: ChartPod): JsonLine[] => chartPod.pod.container(SIDECAR_CONTAINER).logs();
const sidecarLog = (chartPod: ChartPod, msg: string): JsonLine | undefined => sidecarLogs(chartPod).find((line) => line.msg === msg);
const postCalls = (chartPod: ChartPod | SidecarlessChartPod): string[] => adminCalls(chartPod).filter((call) => call.startsWith('POST'));
const DRAIN_POSTS = ['POST /healthcheck/fail', 'POST /drain_listeners?graceful&skip_exit'];

/**
 * The termination went as the chart means it to: drained, Envoy released by its hook (after at
 * least the minimum drain), no SIGKILL, in time. Classic: the sidecar's own hook drained; native:
 * the sidecar had no hook and was stopped only once Envoy had exited.
 */
function expectCleanTermination(timeline: Timeline, rendered: RenderedPod, chartPod: ChartPod): void {
  const sidecar = chartPod.pod.container(SIDECAR_CONTAINER);
  const story = `${timeline.format()}\nsidecar log:\n${sidecar
    .logs()
    .map((l) => JSON.stringify(l))
    .join('\n')}\nsidecar stderr: ${sidecar.stderr}`;
  const envoyHook = timeline.find('prestop-end', ENVOY_CONTAINER);
  expect(envoyHook?.detail, story).toBe('HTTP 200');
  expect(timeline.find('sigterm', ENVOY_CONTAINER)?.t).toBeGreaterThanOrEqual(envoyHook?.t ?? Infinity);
  const minDrainMs = parseDuration(rendered.sidecarEnv.ENVOY_SHUTDOWN_MIN_DRAIN_DURATION ?? '');
  if (rendered.native) {
    expect(timeline.find('prestop-start', SIDECAR_CONTAINER), story).toBeUndefined();
    expect(timeline.find('sigterm', SIDECAR_CONTAINER)?.t).toBeGreaterThanOrEqual(timeline.find('container-exit', ENVOY_CONTAINER)?.t ?? Infinity);
    expect(envoyHook?.t).toBeGreaterThanOrEqual((timeline.find('prestop-start', ENVOY_CONTAINER)?.t ?? Infinity) + minDrainMs);
  } else {
    expect(timeline.find('prestop-end', SIDECAR_CONTAINER)?.detail, story).toBe('exit 0');
    // Released by the drain (the ready file), which lasts at least the minimum drain duration.
    expect(envoyHook?.t).toBeGreaterThanOrEqual((timeline.find('prestop-start', SIDECAR_CONTAINER)?.t ?? Infinity) + minDrainMs);
  }
  expect(timeline.find('sigkill')).toBeUndefined();
  expect(timeline.find('prestop-timeout')).toBeUndefined();
  expect(timeline.find('event'), story).toBeUndefined();
  expect(timeline.find('pod-gone')?.t).toBeLessThan((rendered.podSpec.terminationGracePeriodSeconds ?? 0) * 1_000);
}

/**
 * Terminates the pod while HTTP/1.1 and HTTP/2 clients send requests through a load balancer that
 * keeps sending new connections to it for `deprogrammingDelayMs`, then only to another pod.
 */
async function terminateUnderLightLoad(
  rendered: RenderedPod,
  chartPod: ChartPod,
  deprogrammingDelayMs: number,
): Promise<{ timeline: Timeline; stats: TrafficStats; before: TrafficStats }> {
  const healthy = await startChartEnvoy();
  cleanups.push(() => healthy.stop());
  const traffic = await Traffic.start({
    terminating: { host: '127.0.0.1', port: listenerPort(rendered, chartPod, 'ingress') },
    healthy: { host: '127.0.0.1', port: healthy.ports.ingress as number },
    http1Clients: 2,
    http2Clients: 1,
    streamsPerSession: 1,
    thinkTimeMs: 10,
  });
  cleanups.push(() => traffic.stop());
  const before = traffic.stats;
  traffic.terminationStarted(deprogrammingDelayMs);
  const timeline = await chartPod.pod.terminate();
  // Each client sends a request after the load balancer let go of the pod and the pod was gone:
  // one that still held a connection to it shows the failure.
  await traffic.untilEveryClientSentSince(Math.max(traffic.deprogrammedAt ?? 0, Date.now()));
  return { timeline, stats: await traffic.stop(), before };
}

describe('the chart, run by the kubelet stand-in', () => {
  it("drains with the chart's settings and ignores a scraper's keep-alive connection to the stats listener", async () => {
    const { rendered, chartPod } = await start({ values: FAST });
    const { pod } = chartPod;
    const scraper = await idleHttp1(listenerPort(rendered, chartPod, 'stats'), '/stats/prometheus');
    cleanups.push(() => scraper.close());
    const scraperClosed = once(scraper.socket, 'close').then(() => Date.now());
    // Envoy counts the scraper on the stats listener: without the chart's ignore list it would hold the drain.
    const admin = chartPod.sidecarEnv.ENVOY_SHUTDOWN_ADMIN_ADDRESS ?? '';
    const gauge = await get(admin, '/stats?filter=^listener\\.stats\\.downstream_cx_active$&format=json');
    expect(JSON.parse(gauge.body)).toEqual({ stats: [{ name: 'listener.stats.downstream_cx_active', value: 1 }] });

    const timeline = await pod.terminate();
    expectCleanTermination(timeline, rendered, chartPod);

    const all = adminCalls(chartPod).filter((call) => !call.includes('listener\\.stats\\.downstream_cx_active$')); // our own read above
    // Nothing but the two start calls and the counts: the pairing comes with each count, the configuration is never read.
    const calls = all;
    expect(calls[0]).toBe('POST /healthcheck/fail');
    expect(calls[1]).toBe('POST /drain_listeners?graceful&skip_exit');
    expect(calls.slice(2).length).toBeGreaterThan(0);
    expect(calls.slice(2)).toEqual(expectedStatsReads({ requests: true }, calls.slice(2))); // --connections listeners, with the requests that tell idle connections

    // The hook ran with the rendered command and environment, not with the binary's defaults.
    expect(sidecarLog(chartPod, 'shutdown started')).toMatchObject({
      adminAddress: admin,
      drainTimeout: '3s',
      minDrainDuration: '500ms',
      quietPeriod: '300ms',
      checkInterval: '200ms',
      connections: 'listeners',
      ignoreListener: ['stats', 'ready'],
      readyFile: chartPod.sidecarEnv.ENVOY_SHUTDOWN_READY_FILE,
      requireEnvoyPrestop: 'true',
      envoyPrestopWait: '1s',
    });
    // Drained at the minimum drain duration, long before the drain timeout, with the scraper still connected.
    expect(sidecarLog(chartPod, 'drain finished: releasing envoy')).toMatchObject({ result: 'drained', connections: 0 });
    // Exit 0, not 3: the drain ended on the count, not at its timeout (however slow the hook was to start).
    expect(timeline.find('prestop-end', SIDECAR_CONTAINER)?.detail).toBe('exit 0');
    expect(sidecarLog(chartPod, 'shutdown finished')?.elapsedMs).toBeLessThan(DRAIN_TIMEOUT_MS);
    expect(await scraperClosed).toBeGreaterThanOrEqual(timeline.find('sigterm', ENVOY_CONTAINER)?.at ?? Infinity);
    // Envoy ran with the chart's drain flags.
    expect(chartPod.envoyArgs.join(' ')).toContain('--drain-strategy immediate --drain-time-s 3');
  });

  it.each([
    { name: 'asked for', set: ['admin.unixSocket.enabled=true'] },
    { name: 'forced by hostNetwork', set: ['hostNetwork=true'] },
  ])('drains over the admin Unix socket in the emptyDir both containers mount ($name)', async ({ set }) => {
    const { rendered, chartPod } = await start({ values: FAST, set });
    const socket = rendered.bootstrap.admin?.address?.pipe?.path ?? '';
    expect(chartPod.adminAddress).toBe(`unix:${chartPod.envoyPath(socket)}`);
    expect(chartPod.bootstrap.admin?.address?.pipe?.path).toBe(`${chartPod.envoyPath(socket)}.envoy`); // Envoy's own, behind the tap
    expect(chartPod.sidecarEnv.ENVOY_SHUTDOWN_ADMIN_ADDRESS).toBe(`unix:${chartPod.envoyPath(socket)}`);

    const timeline = await chartPod.pod.terminate();
    expectCleanTermination(timeline, rendered, chartPod);
    expect(adminCalls(chartPod).slice(0, 2)).toEqual(['POST /healthcheck/fail', 'POST /drain_listeners?graceful&skip_exit']);
    expect(sidecarLog(chartPod, 'drain finished: releasing envoy')).toMatchObject({ result: 'drained' });
  });

  it('loses no request under light load while the load balancer moves clients to another pod', async () => {
    const { rendered, chartPod } = await start({ values: { shutdown: UNDER_LOAD } });
    // The LB keeps sending new connections for 300 ms, well inside the 1 s minimum drain.
    const { timeline, stats, before } = await terminateUnderLightLoad(rendered, chartPod, 300);

    expectCleanTermination(timeline, rendered, chartPod);
    expect(stats.failures).toEqual([]);
    expect(stats.requests.terminating).toBeGreaterThan(before.requests.terminating);
    expect(stats.requests.healthy).toBeGreaterThan(0);
    expect(sidecarLog(chartPod, 'drain finished: releasing envoy')).toMatchObject({ result: 'drained', connections: 0 });
  });
});

describe('the chart with hostNetwork: true, run by the kubelet stand-in', () => {
  it.each([
    { mode: 'classic', kubeVersion: undefined, values: { hostNetwork: true, shutdown: UNDER_LOAD } },
    { mode: 'native', kubeVersion: '1.29.0', values: { hostNetwork: true, nativeSidecar: true, shutdown: UNDER_LOAD } },
  ])("drains under load ($mode): kubelet dials the host Envoy's hook names, 0 lost, Envoy's SIGTERM after the drain", async ({ kubeVersion, values }) => {
    const { rendered, chartPod } = await start({ values, ...(kubeVersion === undefined ? {} : { kubeVersion }) });
    const { timeline, stats, before } = await terminateUnderLightLoad(rendered, chartPod, 500);
    // Both at once, so a failure shows kubelet's message beside what it cost.
    const story = `${timeline.format()}\nfailures: ${JSON.stringify(stats.failures.slice(0, 5))}`;
    expect({ envoyHook: timeline.find('prestop-end', ENVOY_CONTAINER)?.detail, lost: stats.failures.length }, story).toEqual({
      envoyHook: 'HTTP 200',
      lost: 0,
    });
    expectCleanTermination(timeline, rendered, chartPod);
    expect(timeline.find('prestop-start', ENVOY_CONTAINER)?.detail).toMatch(/^httpGet 127\.0\.0\.1:\d+\/shutdown\/(ready|drain)$/);
    expect(stats.requests.terminating).toBeGreaterThan(before.requests.terminating);
    expect(stats.requests.healthy).toBeGreaterThan(0);
    expect(postCalls(chartPod)).toEqual(DRAIN_POSTS);
    expect(sidecarLogs(chartPod).find((l) => l.msg === 'shutdown finished')).toMatchObject({ result: 'drained', connections: 0 });
  });
});

describe("a preStop hook without a pod termination, with the chart's hooks and token", () => {
  it('a liveness restart of the sidecar leaves Envoy serving, even after a stranger called /shutdown/ready; the termination then drains', async () => {
    const { rendered, chartPod } = await start({ values: FAST });
    const { pod } = chartPod;
    const admin = chartPod.sidecarEnv.ENVOY_SHUTDOWN_ADMIN_ADDRESS ?? '';

    // A client elsewhere in the cluster calls /shutdown/ready without the token: it may wait, but proves nothing.
    const stranger = new AbortController();
    const strangerDone = request({ port: chartPod.managerPort }, '/shutdown/ready', { signal: stranger.signal }).catch(() => undefined);
    await pod.container(SIDECAR_CONTAINER).waitForLine((line) => line.msg === 'waiting for the drain to finish');
    stranger.abort();
    await strangerDone;
    await pod.container(SIDECAR_CONTAINER).waitForLine((line) => line.msg === 'waiter went away');

    // kubelet restarts the sidecar alone: its preStop hook (the chart's command, --require-envoy-prestop) runs first.
    await pod.restartContainer(SIDECAR_CONTAINER);
    expect(pod.timeline.events.map((e) => `${e.kind} ${e.container ?? ''} ${e.detail ?? ''}`.trim())).toEqual([
      `prestop-start ${SIDECAR_CONTAINER} exec envoy-shutdown-manager shutdown --require-envoy-prestop`,
      `prestop-end ${SIDECAR_CONTAINER} exit 0`,
      `sigterm ${SIDECAR_CONTAINER}`,
      `container-restart ${SIDECAR_CONTAINER} liveness probe failed`,
    ]);
    // Envoy untouched: no admin POST, still LIVE, still ready on the readiness listener its probe calls.
    expect(postCalls(chartPod)).toEqual([]);
    expect((await get(admin, '/ready')).body).toBe('LIVE\n');
    const readiness = await request({ port: listenerPort(rendered, chartPod, 'ready') }, '/ready');
    expect(readiness.status).toBe(200);
    const logs = sidecarLogs(chartPod);
    expect(logs.find((l) => l.msg === 'waiting for the drain to finish')).toMatchObject({ envoyPrestop: false });
    expect(logs.some((l) => String(l.msg).startsWith("no sign of Envoy's preStop hook"))).toBe(true);
    expect(logs.find((l) => l.msg === 'shutdown started')).toBeUndefined();

    // The real termination: Envoy's hook carries the rendered token, the restarted manager accepts it, the hook drains.
    const timeline = await pod.terminate();
    expectCleanTermination(timeline, rendered, chartPod);
    expect(postCalls(chartPod)).toEqual(DRAIN_POSTS);
    const after = sidecarLogs(chartPod).slice(logs.length);
    expect(after.find((l) => l.msg === 'waiting for the drain to finish')).toMatchObject({ envoyPrestop: true });
    expect(after.some((l) => l.msg === "envoy's preStop hook reached the manager: the pod is terminating")).toBe(true);
    expect(after.find((l) => l.msg === 'drain finished: releasing envoy')).toMatchObject({ result: 'drained' });
    expect(JSON.stringify(sidecarLogs(chartPod))).not.toContain(chartPod.sidecarEnv.ENVOY_SHUTDOWN_HOOK_TOKEN);
  });
});

describe('the chart with nativeSidecar: true, run by the kubelet stand-in', () => {
  it("refuses a drain without the token, drains from Envoy's own hook with zero failed requests, and stops the sidecar after Envoy", async () => {
    const { rendered, chartPod } = await start({ kubeVersion: '1.29.0', values: { nativeSidecar: true, shutdown: UNDER_LOAD } });
    expect(rendered.native).toBe(true);
    const stranger = await request({ port: chartPod.managerPort }, '/shutdown/drain');
    expect(stranger.status).toBe(403);
    expect(adminCalls(chartPod)).toEqual([]);

    const { timeline, stats, before } = await terminateUnderLightLoad(rendered, chartPod, 500);

    expectCleanTermination(timeline, rendered, chartPod);
    expect(timeline.find('prestop-start', ENVOY_CONTAINER)?.detail).toMatch(/\/shutdown\/drain$/);
    expect(stats.failures).toEqual([]);
    expect(stats.requests.terminating).toBeGreaterThan(before.requests.terminating);
    expect(stats.requests.healthy).toBeGreaterThan(0);
    expect(postCalls(chartPod)).toEqual(DRAIN_POSTS);
    // The manager drained with the chart's settings, read from its environment.
    expect(sidecarLog(chartPod, 'shutdown started')).toMatchObject({
      drainTimeout: '8s',
      minDrainDuration: '1s',
      quietPeriod: '500ms',
      checkInterval: '200ms',
      connections: 'listeners',
    });
    expect(sidecarLog(chartPod, 'shutdown finished')).toMatchObject({ result: 'drained', connections: 0 });
    expect(sidecarLog(chartPod, 'drain request refused: it does not carry the hook token')).toBeDefined();
  });
});

describe('the chart with mode: sidecarless, run by the kubelet stand-in', () => {
  it("installs the copy in its init container, drains in Envoy's own exec hook with zero failed requests, SIGTERM after it, logs in Envoy's log", async () => {
    const rendered = readSidecarlessPod(await renderChart({ values: { mode: 'sidecarless', shutdown: SIDECARLESS_UNDER_LOAD } }));
    const chartPod = await startSidecarlessChartPod(rendered);
    cleanups.push(() => chartPod.destroy());
    // The init container ran the real `install` on the remapped volume; Envoy's hook is what it printed, plus --no-ready-file.
    expect(chartPod.installPrinted).toEqual(chartPod.hookCommand.slice(0, -1));
    expect(chartPod.hookCommand[0]).toBe(chartPod.envoyPath('/esm/current/lib/ld-linux-x86-64.so.2'));

    const run = await terminateUnderLoad(chartPod, { deprogrammingDelayMs: 500 });
    const { timeline } = run;
    const envoy = chartPod.pod.container(ENVOY_CONTAINER);
    const story = `${timeline.format()}\nenvoy log:\n${envoy
      .logs()
      .map((l) => JSON.stringify(l))
      .join('\n')}\nenvoy stderr: ${envoy.stderr}`;
    expect(run.traffic.failures).toEqual([]);
    expect(run.traffic.requests.terminating).toBeGreaterThan(run.requestsBeforeTermination);
    expect(run.traffic.requests.healthy).toBeGreaterThan(0);
    // Only Envoy's hook ran, the rendered exec, and Envoy got SIGTERM once it returned, drained.
    expect(timeline.find('prestop-start', ENVOY_CONTAINER)?.detail, story).toBe(
      'exec ld-linux-x86-64.so.2 --library-path lib envoy-shutdown-manager shutdown --no-ready-file',
    );
    const hookEnd = timeline.find('prestop-end', ENVOY_CONTAINER);
    expect(hookEnd?.detail, story).toBe('exit 0');
    expect(hookEnd?.t).toBeGreaterThanOrEqual((timeline.find('prestop-start', ENVOY_CONTAINER)?.t ?? Infinity) + 1_000); // the minimum drain
    expect(timeline.find('sigterm', ENVOY_CONTAINER)?.t).toBeGreaterThanOrEqual(hookEnd?.t ?? Infinity);
    expect(timeline.find('sigkill')).toBeUndefined();
    expect(timeline.find('prestop-timeout')).toBeUndefined();
    expect(timeline.find('pod-gone')?.t).toBeLessThan((rendered.podSpec.terminationGracePeriodSeconds ?? 0) * 1_000);
    expect(timeline.events.filter((e) => e.container !== undefined && e.container !== ENVOY_CONTAINER)).toEqual([]);
    expect(postCalls(chartPod)).toEqual(DRAIN_POSTS);
    // The hook's log lines are in Envoy's container log (through ENVOY_SHUTDOWN_HOOK_LOG_PATH, PID 1's stdout
    // in a pod), not in Envoy's own output, and show the chart's settings, read from Envoy's environment.
    const hookLine = (msg: string): JsonLine | undefined => envoy.logs().find((line) => line.msg === msg);
    expect(hookLine('shutdown started'), story).toMatchObject({
      component: 'shutdown',
      adminAddress: chartPod.envoyEnv.ENVOY_SHUTDOWN_ADMIN_ADDRESS,
      drainTimeout: '8s',
      minDrainDuration: '1s',
      quietPeriod: '500ms',
      checkInterval: '200ms',
      connections: 'listeners',
      ignoreListener: ['stats', 'ready'],
    });
    expect(hookLine('shutdown finished')).toMatchObject({ result: 'drained', connections: 0, readyFile: 'none' });
    expect(envoy.lines.some((line) => line.msg === 'shutdown finished')).toBe(false);
    expect(chartPod.pod.container(INSTALL_CONTAINER).lines.some((line) => JSON.stringify(line).includes('verified'))).toBe(true);
  });
});
