// Sidecar-less mode in real containers: the chart's init container runs the image's `install`
// onto a shared volume, and the Envoy container, a different image with no Node and no shell,
// runs the installed copy as its exec preStop hook. The claim "runs in any image", shown.
import { afterEach, describe, expect, it } from 'vitest';
import { renderChart } from '../support/chart/helm.js';
import { readSidecarlessPod } from '../support/chart/manifests.js';
import { DEPROGRAMMING_DELAY_MS, terminateUnderLoad } from './support/loaded-termination.js';
import { jsonLines } from './support/wait.js';
import { PodmanObjects, testImages } from './support/podman.js';

const images = testImages();
const objects = new PodmanObjects();
afterEach(() => objects.removeAll());

describe('sidecar-less pod in podman', () => {
  it("drains Envoy from its own exec hook, the executable copied from the manager's image: no request lost", async () => {
    const rendered = readSidecarlessPod(await renderChart({ values: { mode: 'sidecarless', shutdown: { minDrainDuration: 1, quietPeriod: 1, checkInterval: 0.2 } } }));
    expect(rendered.install?.image).toBe(images.managerTag.replace(/^localhost\//, ''));
    expect(rendered.hookCommand[0]).toMatch(new RegExp(`^${rendered.executableMount.mountPath}/`));
    const { termination, traffic } = await terminateUnderLoad(rendered, objects, { [rendered.install?.image ?? '']: images.manager, [rendered.envoy.image ?? '']: images.envoy }, { hooks: true });
    expect(traffic.failures).toEqual([]);
    expect(traffic.requests.terminating).toBeGreaterThan(50);
    const envoy = termination.containers['envoy'];
    expect(envoy).toMatchObject({ hook: 'exec exit 0', exitCode: 0 });
    expect(envoy?.hookEndedMs).toBeGreaterThan(DEPROGRAMMING_DELAY_MS);
    // The hook ran in Envoy's container: its lines are in Envoy's container log, between Envoy's own.
    const messages = (await jsonLines(envoy?.id ?? '')).map((line) => line['msg']);
    expect(messages).toEqual(expect.arrayContaining(['shutdown started', 'graceful drain started', 'shutdown finished']));
  });
});
