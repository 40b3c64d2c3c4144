import { defineConfig, type TestProjectInlineConfiguration } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

// One project per kind of set-up: each runs only the global set-up its tests need, so
// `npm run test:unit` starts at once and the heavy builds (kube-apiserver, kube-controller-manager,
// syft) run in the background while the other projects' tests run (docs/testing.md).
const PRODUCT = 'test/setup/product.ts';
const CONTAINERS = 'test/setup/containers.ts';

/** Files that need real containers, wherever their kind puts them. */
const CONTAINER_FILES = ['test/image/**/*.test.ts', 'test/fleet/**/*.test.ts', 'test/peers/*-termination.test.ts', 'test/dropin/image.test.ts'];
/** Files that start a Kubernetes API server. */
const KUBE_FILES = ['test/kube/**/*.test.ts', 'test/support/kube/**/*.test.ts', 'test/chart/install.test.ts', 'test/chart/upgrade.test.ts'];

/** Projects whose files wait for a background build (test/support/background-build.ts, which counts them in this global). */
const WAITING = new Set(['kube', 'release']);
const buildsPending = (): boolean =>
  ((globalThis as { [key: symbol]: { pending?: number } | undefined })[Symbol.for('esm.background-builds')]?.pending ?? 0) > 0;

/** While a build is under way (a new machine), its waiting files go last: each holds a worker the other files can use meanwhile. */
class BuildsLast extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    if (!buildsPending()) return sorted;
    const waits = (file: TestSpecification): boolean => WAITING.has(file.project.name);
    return [...sorted.filter((file) => !waits(file)), ...sorted.filter(waits)];
  }
}

const project = (name: string, test: TestProjectInlineConfiguration['test']): TestProjectInlineConfiguration => ({ extends: true, test: { name, ...test } });

export default defineConfig({
  test: {
    // Tests spawn real processes and wait on real sockets; the slowest is bounded by its own deadlines.
    testTimeout: 60_000,
    hookTimeout: 30_000,
    // Two cores: more workers only make timings noisier.
    maxWorkers: 2,
    reporters: ['default', ['json', { outputFile: 'test-results.json' }]],
    sequence: { sequencer: BuildsLast },
    projects: [
      // Listed first, their set-ups first: the background builds start before the other set-ups run.
      project('kube', { include: KUBE_FILES, globalSetup: ['test/setup/kube.ts', PRODUCT], setupFiles: ['test/setup/wait-kube.ts'] }),
      project('release', { include: ['test/release/**/*.test.ts'], globalSetup: ['test/setup/release.ts', PRODUCT], setupFiles: ['test/setup/wait-syft.ts'] }),
      project('unit', {
        include: ['test/unit/**/*.test.ts', 'test/docs/**/*.test.ts', 'test/support/{kubelet,large-config,peer-pod}/*.test.ts'],
      }),
      project('e2e', {
        include: [
          'test/e2e/**/*.test.ts',
          'test/chart/**/*.test.ts',
          'test/dropin/**/*.test.ts',
          'test/peers/**/*.test.ts',
          'test/support/traffic/**/*.test.ts',
        ],
        exclude: [...CONTAINER_FILES, ...KUBE_FILES],
        globalSetup: [PRODUCT],
      }),
      project('containers', { include: CONTAINER_FILES, globalSetup: [PRODUCT, CONTAINERS] }),
    ],
  },
});
