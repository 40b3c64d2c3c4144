// Global set-up of the projects that run real containers: the test images (podman's layer cache
// makes an unchanged rebuild take about 2 s) and hey for the fleet, handed to the tests by
// `provide`; whatever containers, pods and volumes this run labelled are removed when it ends.
// No podman, no run: those tests fail here with one reason, never skip.
import type { TestProject } from 'vitest/node';
import { ensureHey } from '../support/fleet/hey.js';
import { buildTestImages } from '../support/podman/images.js';
import { removeRun } from '../support/podman/podman-run.js';

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const images = await buildTestImages((line) => console.log(line));
  const runId = `${process.pid}${Date.now().toString(36)}`;
  project.provide('managerImage', images.manager);
  project.provide('managerImageTag', images.managerTag);
  project.provide('envoyImage', images.envoy);
  project.provide('managerImageArm64', images.managerArm64);
  project.provide('podmanRunId', runId);
  project.provide('heyBinary', ensureHey());
  return async () => {
    const left = await removeRun(runId);
    if (left.length > 0) console.warn(`removed ${left.length} podman objects a test left behind`);
  };
}
