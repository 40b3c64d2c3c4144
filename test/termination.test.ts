// Whole-pod termination: the kubelet stand-in runs both preStop hooks at once against the Envoy
// stand-in and the built binary, then SIGTERM, then SIGKILL at the grace period.
import { afterEach, describe, expect, it } from 'vitest';
import { idleHttpConnection, tcpConnection } from './support/clients.js';
import { terminateUnderLoad } from './support/termination-run.js';
import { ENVOY, SIDECAR, startEnvoyPod, type EnvoyPod, type EnvoyPodOptions } from './support/envoy-pod.js';

const pods: EnvoyPod[] = [];
const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  for (const pod of pods.splice(0)) await pod.destroy();
});

async function start(options: EnvoyPodOptions): Promise<EnvoyPod> {
  const pod = await startEnvoyPod(options);
  pods.push(pod);
  return pod;
}

const LISTENERS = [
  { name: 'ingress', kind: 'http' as const, drainType: 'MODIFY_ONLY' as const, responseDelayMs: 5 },
  { name: 'raw', kind: 'tcp' as const, drainType: 'MODIFY_ONLY' as const },
];

describe('pod termination', () => {
  it('releases Envoy at the drain timeout when a TCP connection never drains, and the pod is gone before SIGKILL', async () => {
    const { pod, listeners } = await start({
      envoy: { drainStrategy: 'immediate', listeners: LISTENERS },
      terminationGracePeriodSeconds: 8,
      shutdownArgs: ['--connections', 'listeners', '--drain-timeout', '2s', '--min-drain-duration', '500ms', '--check-interval', '200ms'],
      managerArgs: ['--ready-timeout', '5s'],
    });
    const tcp = await tcpConnection(listeners['raw'] as number);
    cleanups.push(() => tcp.close());
    const timeline = await pod.terminate();

    expect(timeline.find('prestop-end', SIDECAR)?.detail).toBe('exit 3'); // drain timeout, connections left
    const envoyHookEnd = timeline.find('prestop-end', ENVOY)!;
    expect(envoyHookEnd.detail).toBe('HTTP 200');
    expect(envoyHookEnd.t).toBeGreaterThanOrEqual(2_000);
    expect(timeline.find('sigterm', ENVOY)!.t).toBeGreaterThanOrEqual(envoyHookEnd.t);
    expect(timeline.find('sigkill')).toBeUndefined();
    expect(timeline.find('grace-period-end')).toBeUndefined();
    expect(timeline.find('pod-gone')!.t).toBeLessThan(8_000);

    const released = pod.container(SIDECAR).logs().find((l) => l['msg'] === 'drain finished: releasing envoy');
    expect(released).toMatchObject({ result: 'timeout', connections: 1 });
    // The hook's own log lines reached the sidecar's log (what `kubectl logs -c shutdown-manager` shows).
    expect(pod.container(SIDECAR).logs().some((l) => l['msg'] === 'drain timeout exceeded' && l['component'] === 'shutdown')).toBe(true);
  });

  it('ends within seconds when Envoy is already dead, not at the drain timeout', async () => {
    const { pod } = await start({
      envoy: { drainStrategy: 'immediate', listeners: LISTENERS },
      terminationGracePeriodSeconds: 90,
      shutdownArgs: ['--drain-timeout', '60s'],
      managerArgs: ['--ready-timeout', '70s'],
    });
    pod.container(ENVOY).signal('SIGKILL');
    await pod.container(ENVOY).exited;
    const timeline = await pod.terminate();
    expect(timeline.find('prestop-end', SIDECAR)?.detail).toBe('exit 1');
    expect(timeline.find('pod-gone')!.t).toBeLessThan(15_000);
    const logs = pod.container(SIDECAR).logs();
    expect(logs.find((l) => l['msg'] === 'shutdown finished')).toMatchObject({ result: 'envoy-unreachable', exitCode: 1 });
  });
});

describe('pod termination under load', () => {
  it('loses no request over HTTP/1.1 and HTTP/2 when load balancers deprogram within the minimum drain', async () => {
    const envoyPod = await start({
      envoy: { drainStrategy: 'immediate', statsFlushIntervalMs: 500, listeners: LISTENERS },
      terminationGracePeriodSeconds: 15,
      shutdownArgs: ['--min-drain-duration', '1500ms', '--drain-timeout', '8s', '--check-interval', '200ms'],
      managerArgs: ['--ready-timeout', '10s'],
    });
    const run = await terminateUnderLoad(envoyPod, { deprogrammingDelayMs: 700, traffic: { http1Clients: 4, http2Clients: 2 } });
    const { timeline, traffic } = run;

    expect(traffic.failures).toEqual([]);
    expect(run.requestsBeforeTermination).toBeGreaterThan(0);
    expect(traffic.requests.terminating).toBeGreaterThan(run.requestsBeforeTermination); // it kept serving while draining
    expect(traffic.requests.healthy).toBeGreaterThan(0); // and clients moved on

    // Envoy got SIGTERM only after the drain ended, and only then did it stop serving.
    const sidecarLogs = envoyPod.pod.container(SIDECAR).logs();
    const drainEnded = sidecarLogs.find((l) => l['msg'] === 'drain completed');
    expect(drainEnded).toBeDefined();
    const envoySigterm = timeline.find('sigterm', ENVOY)!;
    expect(envoySigterm.at).toBeGreaterThanOrEqual(Date.parse(String(drainEnded!['time'])));
    expect(traffic.lastRequestToTerminatingAt).toBeLessThanOrEqual(envoySigterm.at);
    expect(timeline.find('prestop-end', SIDECAR)?.detail).toBe('exit 0');
    expect(timeline.find('prestop-end', ENVOY)?.detail).toBe('HTTP 200');
    // Both hooks started together, as kubelet runs them.
    expect(Math.abs(timeline.find('prestop-start', ENVOY)!.t - timeline.find('prestop-start', SIDECAR)!.t)).toBeLessThan(1_000);
    // The whole sequence fits inside the grace period.
    expect(timeline.find('sigkill')).toBeUndefined();
    expect(timeline.find('pod-gone')!.t).toBeLessThan(15_000);
  });

  it('with --connections listeners, a scraper kept on the ignored stats listener does not hold the drain', async () => {
    const envoyPod = await start({
      envoy: { drainStrategy: 'immediate', listeners: [...LISTENERS, { name: 'stats', kind: 'http', drainType: 'MODIFY_ONLY' }] },
      terminationGracePeriodSeconds: 30,
      shutdownArgs: ['--connections', 'listeners', '--ignore-listener', 'stats', '--min-drain-duration', '1s', '--drain-timeout', '20s', '--check-interval', '200ms'],
      managerArgs: ['--ready-timeout', '25s'],
    });
    const scraper = await idleHttpConnection(envoyPod.listeners['stats'] as number, '/stats/prometheus');
    cleanups.push(() => scraper.close());
    const run = await terminateUnderLoad(envoyPod, { deprogrammingDelayMs: 500, traffic: { http1Clients: 3, http2Clients: 2 } });
    expect(run.traffic.failures).toEqual([]);
    // Exit 0 means it finished on the count, not at its 20 s timeout (exit 3).
    expect(run.timeline.find('prestop-end', SIDECAR)?.detail).toBe('exit 0');
    const finished = envoyPod.pod.container(SIDECAR).logs().find((l) => l['msg'] === 'shutdown finished');
    expect(finished).toMatchObject({ result: 'drained', connections: 0 });
    expect(finished?.['elapsedMs']).toBeLessThan(20_000);
    expect(scraper.socket.destroyed).toBe(true); // it lived until Envoy exited
  });
});
