// Whole-pod termination: the kubelet stand-in runs both preStop hooks at once against the Envoy
// stand-in and the built binary, then SIGTERM, then SIGKILL at the grace period.
import { afterEach, describe, expect, it } from 'vitest';
import { tcpConnection } from './support/clients.js';
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
