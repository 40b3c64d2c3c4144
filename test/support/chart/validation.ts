// The chart's values validation fails a render once, with every problem listed under one heading.
import { expect } from 'vitest';
import type { HelmResult } from './helm.js';

/** The render failed once, listing exactly `problems` (each a substring of one listed line). */
export function expectProblems(result: HelmResult, problems: readonly string[]): void {
  expect(result.code).not.toBe(0);
  for (const problem of problems) expect(result.stderr).toContain(problem);
  expect(result.stderr.match(/invalid values for the envoy-shutdown-manager chart/g)).toHaveLength(1);
  expect(result.stderr).toContain(`(${problems.length} problems)`);
  expect(result.stderr.split('\n').filter((line) => line.startsWith('  - '))).toHaveLength(problems.length);
}
