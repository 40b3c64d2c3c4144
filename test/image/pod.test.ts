// The chart's pod as real containers (the project's image beside real Envoy 1.40 in its own image,
// the rendered spec), terminated as a real kubelet terminates it, under HTTP/1.1 and HTTP/2 load
// through Envoy: nothing is lost. The same pod without its preStop hooks loses requests.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { renderChart } from '../support/chart/helm.js';
import { readPod, type RenderedPod } from '../support/chart/manifests.js';
import { startRealEnvoy } from '../support/real-envoy/process.js';
import { Traffic, type TrafficStats } from '../support/traffic/traffic.js';
import { terminatePod, type PodTermination } from './support/podman-kubelet.js';
import { startPodmanPod } from './support/podman-pod.js';
import { PodmanObjects, testImages } from './support/podman.js';

const images = testImages();
const TOKEN = 'pod-test-hook-token-0123456789';
/** How long the load balancer keeps sending new connections to the pod after its deletion. */
const DEPROGRAMMING_DELAY_MS = 1_500;
/** Clients keep going this long after the load balancer let go: a pod that died early must show it. */
const AFTER_DEPROGRAMMED_MS = 300;
/** A short drain, so the test is quick: the drain still has to outlast the deprogramming delay. */
const VALUES = { hookToken: { value: TOKEN }, shutdown: { minDrainDuration: 1, quietPeriod: 1, checkInterval: 0.2 } };

const objects = new PodmanObjects();
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await objects.removeAll();
});

async function renderedPod(): Promise<RenderedPod> {
  return readPod(await renderChart({ values: VALUES }));
}

/** Starts the pod and a second replica (real Envoy from the same bootstrap), loads the pod, and terminates it. */
async function terminateUnderLoad(rendered: RenderedPod, hooks: boolean): Promise<{ termination: PodTermination; traffic: TrafficStats }> {
  // The chart's manager image is the one `npm run image` builds; its Envoy image (a registry's) is played by the pinned Envoy's image.
  expect(`localhost/${rendered.sidecar.image}`).toBe(images.managerTag);
  const pod = await startPodmanPod(rendered, objects, { [rendered.sidecar.image ?? '']: images.manager, [rendered.envoy.image ?? '']: images.envoy });
  const other = await startRealEnvoy({ bootstrap: rendered.bootstrap });
  cleanups.push(() => other.stop());
  const traffic = await Traffic.start({
    terminating: { host: '127.0.0.1', port: pod.ports.port(8080) },
    healthy: { host: '127.0.0.1', port: other.ports['ingress'] ?? 0 },
    requestTimeoutMs: 5_000,
  });
  cleanups.push(async () => void (await traffic.stop()));
  // The pod is deleted: the endpoints controller and kubelet act at the same moment.
  traffic.terminationStarted(DEPROGRAMMING_DELAY_MS);
  const termination = await terminatePod(pod, { hooks });
  const lettingGo = (traffic.deprogrammedAt ?? Date.now()) + AFTER_DEPROGRAMMED_MS - Date.now();
  if (lettingGo > 0) await sleep(lettingGo);
  return { termination, traffic: await traffic.stop() };
}

describe('the chart pod in podman, terminated as kubelet does under load', () => {
  it('loses no request: each container gets SIGTERM right after its own hook, Envoy once the drain has ended', async () => {
    const { termination, traffic } = await terminateUnderLoad(await renderedPod(), true);
    const { envoy, 'shutdown-manager': manager } = termination.containers;
    expect(traffic.failures).toEqual([]);
    expect(traffic.requests.terminating).toBeGreaterThan(50);
    expect(traffic.requests.healthy).toBeGreaterThan(0);
    expect(envoy).toMatchObject({ hook: 'httpGet 200', exitCode: 0 });
    expect(manager).toMatchObject({ hook: 'exec exit 0', exitCode: 0 });
    // Envoy was held past the load balancer's delay, and stopped only after its own hook returned.
    expect(envoy?.hookEndedMs).toBeGreaterThan(DEPROGRAMMING_DELAY_MS);
    for (const c of [envoy, manager]) expect(c?.sigtermMs).toBeGreaterThanOrEqual(c?.hookEndedMs ?? Infinity);
  });

  it('without the preStop hooks (negative control) loses requests', async () => {
    const { termination, traffic } = await terminateUnderLoad(await renderedPod(), false);
    expect(termination.containers['envoy']).toMatchObject({ hook: 'none', exitCode: 0 });
    expect(traffic.failures.length).toBeGreaterThan(0);
    // Both protocols' connections were cut: the load really was HTTP/1.1 and HTTP/2 through Envoy.
    expect(new Set(traffic.failures.map((failure) => failure.protocol))).toEqual(new Set(['http1', 'http2']));
  });
});
