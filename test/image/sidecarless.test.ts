// Sidecar-less mode in real containers: the chart's init container runs the image's `install`
// onto a shared volume (or the image itself is mounted as a volume), and the Envoy container, a
// different image with no Node and no shell, runs the executable from there as its exec preStop
// hook. The claim "runs in any image", shown.
import { afterEach, describe, expect, it } from 'vitest';
import { renderChart } from '../support/chart/helm.js';
import { readSidecarlessPod } from '../support/chart/manifests.js';
import { PodmanObjects, testImages } from '../support/podman/podman.js';
import { jsonLines } from '../support/podman/wait.js';
import { DEPROGRAMMING_DELAY_MS, terminateUnderLoad } from './support/loaded-termination.js';

const images = testImages();
const objects = new PodmanObjects();
afterEach(() => objects.removeAll());

const MANAGER_IMAGE = images.managerTag.replace(/^localhost\//, '');

describe('sidecar-less pod in podman', () => {
  it.each([
    ["the executable copied by the image's install init container", 'copy', '1.25.0'],
    ['the image itself mounted as a volume (podman image mount)', 'imageVolume', '1.33.0'],
  ])('drains Envoy from its own exec hook, %s: no request lost', async (_, source, kubeVersion) => {
    const values = { mode: 'sidecarless', sidecarless: { source }, shutdown: { minDrainDuration: 1, quietPeriod: 1, checkInterval: 0.2 } };
    const rendered = readSidecarlessPod(await renderChart({ values, kubeVersion }));
    expect(rendered.install?.image ?? (rendered.executableVolume as { image?: { reference?: string } }).image?.reference).toBe(MANAGER_IMAGE);
    expect(rendered.hookCommand[0]).toMatch(new RegExp(`^${rendered.executableMount.mountPath}/`));
    const { termination, traffic, requestsBeforeTermination } = await terminateUnderLoad(
      rendered,
      objects,
      { [MANAGER_IMAGE]: images.manager, [rendered.envoy.image ?? '']: images.envoy },
      { hooks: true },
    );
    expect(traffic.failures).toEqual([]);
    expect(traffic.requests.terminating).toBeGreaterThan(requestsBeforeTermination); // it kept serving while terminating
    const envoy = termination.containers.envoy;
    expect(envoy).toMatchObject({ hook: 'exec exit 0', exitCode: 0 });
    expect(envoy?.hookEndedMs).toBeGreaterThan(DEPROGRAMMING_DELAY_MS);
    // The hook ran in Envoy's container: its lines are in Envoy's container log, between Envoy's own.
    const messages = (await jsonLines(envoy?.id ?? '')).map((line) => line.msg);
    expect(messages).toEqual(expect.arrayContaining(['shutdown started', 'graceful drain started', 'shutdown finished']));
  });
});
