// The podman kubelet's grace period, on a real container: kubelet stops waiting for a preStop hook
// still running when the grace period ends, and its container gets SIGTERM with StopContainer's
// minimum of 2 s, then SIGKILL; the pod is gone within grace + 2 s (plus podman's own overhead).
import { afterEach, describe, expect, it } from 'vitest';
import { PortMap } from '../support/chart/chart-pod.js';
import { PodmanObjects, podman, testImages } from '../support/podman/podman.js';
import { terminatePod } from '../support/podman/podman-kubelet.js';
import { waitForHttp } from '../support/podman/wait.js';

const images = testImages();
const objects = new PodmanObjects();
afterEach(() => objects.removeAll());

describe('podman kubelet', () => {
  it('cuts a hook still running at the grace period and stops its container 2 s later', async () => {
    const ports = await PortMap.reserve([19002]);
    const port = ports.port(19002);
    const volume = await objects.volume('shutdown');
    const pod = objects.pod('grace');
    await podman(['pod', 'create', '--name', pod, '--network', 'host', ...objects.labelArgs]);
    const id = objects.container('manager');
    // No drain ever starts: the manager holds /shutdown/ready far past the pod's 2 s grace period.
    await podman([
      'run',
      '--detach',
      '--pod',
      pod,
      '--name',
      id,
      ...objects.labelArgs,
      '--user',
      '65532:65532',
      '--volume',
      `${volume}:/shutdown`,
      '--env',
      'ENVOY_SHUTDOWN_READY_FILE=/shutdown/ready',
      '--env',
      'ENVOY_SHUTDOWN_DRAIN_START_TIMEOUT=60s',
      images.manager,
      'shutdown-manager',
      '--host',
      '127.0.0.1',
      '--port',
      String(port),
      '--ready-timeout',
      '70s',
    ]);
    await waitForHttp(id, port, '/healthz');
    const termination = await terminatePod(
      {
        name: pod,
        terminationGracePeriodSeconds: 2,
        hostNetwork: false,
        ports,
        sidecars: [],
        containers: [{ name: 'held', id, preStop: { httpGet: { port, path: '/shutdown/ready' } } }],
        container: () => {
          throw new Error('unused');
        },
      },
      { hooks: true },
    );
    const held = termination.containers.held;
    expect(held?.hook).toBe('cut at the grace period');
    expect(held?.hookEndedMs).toBeGreaterThanOrEqual(2_000);
    expect(held?.sigtermMs).toBeLessThan(3_000);
    // Stopped within the 2 s extension (exit 0 on SIGTERM, or 137 when it had to be killed), not at the old grace period.
    // podman's own work around the stop gets 5 s, for a busy machine; a stop that let the container
    // run out podman's default 10 s would still exceed the bound.
    expect(held?.exitedMs).toBeLessThan((held?.sigtermMs ?? 0) + 2_000 + 5_000);
    expect([0, 137]).toContain(held?.exitCode);
  });
});
