import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    // Tests spawn real processes and wait on real sockets; the slowest is bounded by its own deadlines.
    testTimeout: 60_000,
    hookTimeout: 30_000,
    // Two cores: more workers only make timings noisier.
    maxWorkers: 2,
    reporters: ['default', ['json', { outputFile: 'test-results.json' }]],
  },
});
