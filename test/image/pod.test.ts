// The chart's pod as real containers (the project's image beside real Envoy 1.40 in its own image,
// the rendered spec), terminated as a real kubelet terminates it, under HTTP/1.1 and HTTP/2 load
// through Envoy: nothing is lost. The same pod without its preStop hooks loses requests.
import { afterEach, describe, expect, it } from 'vitest';
import { renderChart } from '../support/chart/helm.js';
import { readPod } from '../support/chart/manifests.js';
import { PodmanObjects, testImages } from '../support/podman/podman.js';
import { DEPROGRAMMING_DELAY_MS, type LoadedTermination, terminateUnderLoad } from './support/loaded-termination.js';

const images = testImages();
const TOKEN = 'pod-test-hook-token-0123456789';
/** A short drain, so the test is quick: the drain still has to outlast the deprogramming delay. */
const VALUES = { hookToken: { value: TOKEN }, shutdown: { minDrainDuration: 1, quietPeriod: 1, checkInterval: 0.2 } };

const objects = new PodmanObjects();
afterEach(() => objects.removeAll());

async function run(hooks: boolean, native = false): Promise<LoadedTermination> {
  const rendered = readPod(await renderChart(native ? { values: { ...VALUES, nativeSidecar: true }, kubeVersion: '1.33.0' } : { values: VALUES }));
  // The chart's manager image is the one `npm run image` builds; its Envoy image (a registry's) is played by the pinned Envoy's image.
  expect(`localhost/${rendered.sidecar.image}`).toBe(images.managerTag);
  return terminateUnderLoad(rendered, objects, { [rendered.sidecar.image ?? '']: images.manager, [rendered.envoy.image ?? '']: images.envoy }, { hooks });
}

describe('the chart pod in podman, terminated as kubelet does under load', () => {
  it('loses no request: each container gets SIGTERM right after its own hook, Envoy once the drain has ended', async () => {
    const { termination, traffic, requestsBeforeTermination } = await run(true);
    const { envoy, 'shutdown-manager': manager } = termination.containers;
    expect(traffic.failures).toEqual([]);
    expect(traffic.requests.terminating).toBeGreaterThan(requestsBeforeTermination); // it kept serving while terminating
    expect(traffic.requests.healthy).toBeGreaterThan(0);
    expect(envoy).toMatchObject({ hook: 'httpGet 200', exitCode: 0 });
    expect(manager).toMatchObject({ hook: 'exec exit 0', exitCode: 0 });
    // Envoy was held past the load balancer's delay, and stopped only after its own hook returned.
    expect(envoy?.hookEndedMs).toBeGreaterThan(DEPROGRAMMING_DELAY_MS);
    for (const c of [envoy, manager]) expect(c?.sigtermMs).toBeGreaterThanOrEqual(c?.hookEndedMs ?? Infinity);
  });

  it("native sidecar: Envoy's hook runs the drain in the manager, and the manager is stopped only after Envoy exited; no request lost", async () => {
    const { termination, traffic, requestsBeforeTermination } = await run(true, true);
    const { envoy, 'shutdown-manager': manager } = termination.containers;
    expect(traffic.failures).toEqual([]);
    expect(traffic.requests.terminating).toBeGreaterThan(requestsBeforeTermination);
    expect(envoy).toMatchObject({ hook: 'httpGet 200', exitCode: 0 });
    expect(envoy?.hookEndedMs).toBeGreaterThan(DEPROGRAMMING_DELAY_MS);
    expect(manager).toMatchObject({ hook: 'none', exitCode: 0 });
    expect(manager?.sigtermMs).toBeGreaterThanOrEqual(envoy?.exitedMs ?? Infinity);
  });

  it('without the preStop hooks (negative control) loses requests', async () => {
    const { termination, traffic } = await run(false);
    expect(termination.containers.envoy).toMatchObject({ hook: 'none', exitCode: 0 });
    expect(traffic.failures.length).toBeGreaterThan(0);
    // Both protocols' connections were cut: the load really was HTTP/1.1 and HTTP/2 through Envoy.
    expect(new Set(traffic.failures.map((failure) => failure.protocol))).toEqual(new Set(['http1', 'http2']));
  });
});
