// Podman for the tests: the images the global setup built, and the objects one test creates
// (podman-objects.ts), labelled with this test run.
import { inject } from 'vitest';
import { RunObjects } from './podman-objects.js';

export { podman, podmanRun } from './podman-run.js';

/** The images the global setup built, by id: a rebuild of the tag elsewhere cannot change them under a test. */
export function testImages(): { manager: string; managerTag: string; managerArm64: string; envoy: string; runId: string } {
  return {
    manager: inject('managerImage'),
    managerTag: inject('managerImageTag'),
    managerArm64: inject('managerImageArm64'),
    envoy: inject('envoyImage'),
    runId: inject('podmanRunId'),
  };
}

/** Names and removes what one test creates, labelled with this test run. */
export class PodmanObjects extends RunObjects {
  constructor() {
    super(testImages().runId);
  }
}

declare module 'vitest' {
  export interface ProvidedContext {
    managerImage: string;
    managerImageTag: string;
    managerImageArm64: string;
    envoyImage: string;
    podmanRunId: string;
    /** hey, built by the global setup (test/support/fleet/hey.ts). */
    heyBinary: string;
  }
}
