// The chart's `helm test` pod, run in podman as rendered: Envoy from the release's bootstrap as a
// native sidecar, then `envoy-shutdown-manager status` from the project's image against it. It
// passes with the chart's wiring, and fails when the manager looks for the admin API elsewhere.
import type { IPod } from 'kubernetes-models/v1';
import { afterEach, describe, expect, it } from 'vitest';
import { type K8sObject, renderChart } from '../support/chart/helm.js';
import { findObjects, readPod, validateAgainstKubernetes } from '../support/chart/manifests.js';
import { PodmanObjects, podman, testImages } from '../support/podman/podman.js';
import { startPodmanPod } from '../support/podman/podman-pod.js';
import { logs } from '../support/podman/wait.js';

const images = testImages();
const objects = new PodmanObjects();
afterEach(() => objects.removeAll());

function testPod(rendered: readonly K8sObject[]): IPod {
  const pods = findObjects<IPod>(rendered, 'Pod').filter((pod) => pod.metadata?.annotations?.['helm.sh/hook'] === 'test');
  expect(pods).toHaveLength(1);
  return pods[0] as IPod;
}

/** Runs the test pod to its end, as `helm test` waits for it; returns the test container's exit code and log. */
async function runHelmTest(rendered: readonly K8sObject[], change: (pod: IPod) => void = () => {}): Promise<{ code: number; log: string }> {
  const pod = testPod(rendered);
  change(pod);
  const workload = readPod(rendered);
  const spec = pod.spec;
  if (spec === undefined) throw new Error('the test pod has no spec');
  const started = await startPodmanPod({ ...workload, podSpec: { ...spec, terminationGracePeriodSeconds: 30 } }, objects, {
    [workload.sidecar.image ?? '']: images.manager,
    [workload.envoy.image ?? '']: images.envoy,
  });
  const status = started.container('status');
  const code = Number((await podman(['wait', status.id], 60_000)).trim());
  return { code, log: await logs(status.id) };
}

describe('helm test', () => {
  it.each([
    ['the default pod', []],
    ['hostNetwork (admin API on a Unix socket)', ['hostNetwork=true']],
  ])('%s: status reads Envoy started from the release bootstrap', async (_, set) => {
    const rendered = await renderChart({ kubeVersion: '1.29.0', set: [...set] });
    validateAgainstKubernetes(rendered);
    expect(testPod(rendered).metadata?.annotations?.['helm.sh/hook-delete-policy']).toBe('before-hook-creation,hook-succeeded');
    const { code, log } = await runHelmTest(rendered);
    expect(log).toMatch(/^envoy\s+LIVE/m);
    expect(code, log).toBe(0);
  });

  it('fails when the manager looks for the admin API where Envoy is not', async () => {
    const rendered = await renderChart({ kubeVersion: '1.29.0' });
    const { code, log } = await runHelmTest(rendered, (pod) => {
      const env = pod.spec?.containers[0]?.env?.find((variable) => variable.name === 'ENVOY_SHUTDOWN_ADMIN_ADDRESS');
      if (env === undefined) throw new Error('the test container has no ENVOY_SHUTDOWN_ADMIN_ADDRESS');
      env.value = '127.0.0.1:19001';
    });
    expect(code, log).toBe(1);
  });

  it('is not rendered for clusters without native sidecars', async () => {
    expect(findObjects(await renderChart({ kubeVersion: '1.28.9' }), 'Pod')).toEqual([]);
  });
});
