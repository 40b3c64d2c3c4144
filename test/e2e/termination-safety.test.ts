// Through the kubelet stand-in, on the real Envoy the chart configures: never drain a pod that is
// not terminating, never hold one that cannot drain, native sidecars and sidecar-less mode.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startSidecarlessChartPod } from '../support/chart/chart-pod.js';
import { renderChart } from '../support/chart/helm.js';
import { readSidecarlessPod } from '../support/chart/manifests.js';
import { ENVOY, type EnvoyPod, type EnvoyPodOptions, SIDECAR, startEnvoyPod } from '../support/envoy-pod.js';
import { request } from '../support/protocols/clients.js';
import { startHealthyEnvoy } from '../support/real-envoy/healthy-envoy.js';
import { startUpstream, type Upstream } from '../support/real-envoy/upstream.js';
import { adminTarget, terminateUnderLoad } from '../support/termination-run.js';
import { Traffic } from '../support/traffic/traffic.js';

const TOKEN = 'per-release-token-for-tests-0123';
const DRAIN = 'POST /drain_listeners?graceful&skip_exit';
let upstream: Upstream;
beforeAll(async () => {
  upstream = await startUpstream();
});
afterAll(() => upstream.close());
const pods: EnvoyPod[] = [];
const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  for (const pod of pods.splice(0)) await pod.destroy();
});

async function start(options: Partial<EnvoyPodOptions>): Promise<EnvoyPod> {
  const pod = await startEnvoyPod({
    realEnvoy: { upstreamPort: upstream.port, values: { shutdown: { drainTimeout: 10 } } },
    terminationGracePeriodSeconds: 20,
    hookToken: TOKEN,
    shutdownArgs: [
      '--require-envoy-prestop',
      '--envoy-prestop-wait',
      '1s',
      '--connections',
      'listeners',
      '--min-drain-duration',
      '1200ms',
      '--drain-timeout',
      '10s',
      '--check-interval',
      '200ms',
    ],
    managerArgs: ['--ready-timeout', '15s', '--drain-start-timeout', '3s'],
    ...options,
  });
  pods.push(pod);
  return pod;
}

/** `event`, or a clear failure naming `what` when the timeline never recorded it. */
function found<T>(event: T | undefined, what: string): T {
  if (event === undefined) throw new Error(`the timeline has no ${what}`);
  return event;
}

/** The calls that change Envoy's state, as the tap in front of its admin API saw them. */
const posts = (pod: EnvoyPod): string[] => pod.adminCalls().filter((c) => c.startsWith('POST'));

describe('a preStop without pod termination', () => {
  it('a liveness restart of the sidecar leaves Envoy serving: LIVE, no drain, zero failed requests', async () => {
    const envoyPod = await start({});
    const healthy = await startHealthyEnvoy();
    cleanups.push(() => healthy.stop());
    const traffic = await Traffic.start({
      terminating: { host: '127.0.0.1', port: envoyPod.listeners.ingress as number },
      healthy: { host: '127.0.0.1', port: healthy.port },
    });
    cleanups.push(() => traffic.stop());

    await envoyPod.pod.restartContainer(SIDECAR);
    const stats = await traffic.stop();

    expect(stats.failures).toEqual([]);
    expect(stats.requests.healthy).toBe(0); // nothing was moved away from the pod
    expect(posts(envoyPod)).toEqual([]);
    const ready = await request(adminTarget(envoyPod.adminAddress), '/ready');
    expect(ready.body).toBe('LIVE\n');
    expect(envoyPod.pod.timeline.events.map((e) => `${e.kind} ${e.container ?? ''}`)).toEqual([
      `prestop-start ${SIDECAR}`,
      `prestop-end ${SIDECAR}`,
      `sigterm ${SIDECAR}`,
      `container-restart ${SIDECAR}`,
    ]);
    expect(envoyPod.pod.timeline.find('prestop-end', SIDECAR)?.detail).toBe('exit 0');
    expect(
      envoyPod.pod
        .container(SIDECAR)
        .logs()
        .some((l) => String(l.msg).startsWith("no sign of Envoy's preStop hook")),
    ).toBe(true);
  });

  it('after such a restart, a real termination still drains under load with zero failed requests', async () => {
    const envoyPod = await start({});
    await envoyPod.pod.restartContainer(SIDECAR);
    const run = await terminateUnderLoad(envoyPod, { deprogrammingDelayMs: 500 });
    expect(run.traffic.failures).toEqual([]);
    expect(run.timeline.find('prestop-end', SIDECAR)?.detail).toBe('exit 0');
    expect(posts(envoyPod)).toEqual(['POST /healthcheck/fail', DRAIN]);
  });
});

describe('no drain, no hostage', () => {
  it("releases Envoy when the sidecar's hook fails: at the sidecar's SIGTERM, not at the ready timeout", async () => {
    const envoyPod = await start({
      // What a missing binary gives: the exec fails (127) without ever starting a drain.
      sidecarHook: [process.execPath, '-e', 'setTimeout(() => process.exit(127), 300)'],
      managerArgs: ['--ready-timeout', '15s', '--drain-start-timeout', '2s'],
    });
    const timeline = await envoyPod.pod.terminate();
    expect(timeline.find('prestop-end', SIDECAR)?.detail).toBe('exit 127');
    const envoyHook = found(timeline.find('prestop-end', ENVOY), "Envoy's prestop-end");
    expect(envoyHook.detail).toBe('HTTP 500');
    // kubelet sends the sidecar SIGTERM once its hook returned; the manager answers Envoy's hook then.
    expect(envoyHook.t).toBeGreaterThanOrEqual(found(timeline.find('sigterm', SIDECAR), "the sidecar's sigterm").t);
    expect(envoyHook.t).toBeLessThan(15_000);
    expect(timeline.find('sigkill')).toBeUndefined();
    const released = envoyPod.pod
      .container(SIDECAR)
      .logs()
      .find((l) => l.level === 'error' && String(l.msg).includes('releasing envoy undrained'));
    expect(released?.msg).toMatch(/^stopped before the ready file appeared/);
  });
});

describe('native sidecar mode', () => {
  it("drains from Envoy's own hook, stops the sidecar after Envoy, and loses no request under load", async () => {
    const envoyPod = await start({
      mode: 'native',
      sidecarEnv: {
        ENVOY_SHUTDOWN_CONNECTIONS: 'listeners',
        ENVOY_SHUTDOWN_MIN_DRAIN_DURATION: '1200ms',
        ENVOY_SHUTDOWN_DRAIN_TIMEOUT: '10s',
        ENVOY_SHUTDOWN_CHECK_INTERVAL: '200ms',
      },
    });
    // A drain attempt from elsewhere in the cluster, before termination: refused, logged, harmless.
    const stranger = await request({ port: envoyPod.managerPort ?? 0 }, '/shutdown/drain');
    expect(stranger.status).toBe(403);
    expect(envoyPod.adminCalls()).toEqual([]);

    const run = await terminateUnderLoad(envoyPod, { deprogrammingDelayMs: 600 });
    const { timeline } = run;
    expect(run.traffic.failures).toEqual([]);
    expect(timeline.find('prestop-end', ENVOY)?.detail).toBe('HTTP 200');
    // Ordering: Envoy exits first; only then is the native sidecar stopped.
    expect(found(timeline.find('sigterm', SIDECAR), "the sidecar's sigterm").t).toBeGreaterThanOrEqual(
      found(timeline.find('container-exit', ENVOY), "Envoy's container-exit").t,
    );
    expect(timeline.find('prestop-start', SIDECAR)).toBeUndefined();
    expect(timeline.find('sigkill')).toBeUndefined();
    expect(posts(envoyPod)).toEqual(['POST /healthcheck/fail', DRAIN]);
    const logs = envoyPod.pod.container(SIDECAR).logs();
    expect(logs.some((l) => l.msg === 'drain request refused: it does not carry the hook token')).toBe(true);
    expect(logs.find((l) => l.msg === 'shutdown finished')).toMatchObject({ result: 'drained', connections: 0 });
    expect(JSON.stringify(logs)).not.toContain(TOKEN);
  });
});

describe('sidecar-less mode', () => {
  it("drains in Envoy's own exec hook from the installed copy: SIGTERM follows it, zero failed requests, logs in Envoy's log", async () => {
    // The chart's sidecar-less pod, its drain's settings as values (no quiet period: the drain's own default).
    const shutdown = { connections: 'listeners', minDrainDuration: 1.2, drainTimeout: 10, checkInterval: 0.2, quietPeriod: 0 };
    const envoyPod = await startSidecarlessChartPod(readSidecarlessPod(await renderChart({ values: { mode: 'sidecarless', shutdown } })));
    pods.push(envoyPod);
    const run = await terminateUnderLoad(envoyPod, { deprogrammingDelayMs: 600 });
    const { timeline } = run;
    expect(run.traffic.failures).toEqual([]);
    expect(run.traffic.requests.healthy).toBeGreaterThan(0);
    const hookEnd = found(timeline.find('prestop-end', ENVOY), "Envoy's prestop-end");
    expect(hookEnd.detail).toBe('exit 0');
    expect(timeline.find('prestop-start', ENVOY)?.detail).toMatch(
      /^exec ld-linux-x86-64\.so\.2 --library-path lib envoy-shutdown-manager shutdown --no-ready-file/,
    );
    expect(found(timeline.find('sigterm', ENVOY), "Envoy's sigterm").t).toBeGreaterThanOrEqual(hookEnd.t);
    expect(timeline.find('sigkill')).toBeUndefined();
    expect(timeline.events.filter((e) => e.container !== undefined && e.container !== ENVOY)).toEqual([]); // nothing else ran
    // The hook copied its logs to PID 1's stdout: `kubectl logs -c envoy` shows them.
    expect(
      envoyPod.pod
        .container(ENVOY)
        .logs()
        .find((l) => l.msg === 'shutdown finished'),
    ).toMatchObject({ result: 'drained', readyFile: 'none', component: 'shutdown' });
  });
});
