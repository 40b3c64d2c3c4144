// Flags that contradict each other or do nothing in the chosen mode: refused rather than silently
// ignored. Values in the environment are shared by every command of a container, so an unused one
// gets a warning line instead.

import { UsageError } from '../shared/errors.js';
import type { OptionSource } from '../shared/option-spec.js';
import { ENV } from './config.js';

export interface ShutdownFlags {
  readonly dryRun?: boolean | undefined;
  readonly connections: string;
  readonly quietPeriod: number;
  readonly requireEnvoyPrestop?: boolean;
}

/**
 * `sourceOf`: where each option's value came from, by attribute. `seen`: the flags given on the
 * command line, negated ones included (commander keeps only the last).
 */
export function checkShutdownFlags(sourceOf: (attribute: string) => OptionSource | undefined, options: ShutdownFlags, seen: ReadonlySet<string>): void {
  const fromFlag = (attribute: string): boolean => sourceOf(attribute) === 'cli';
  if (seen.has('ready-file') && seen.has('no-ready-file')) throw new UsageError('--ready-file and --no-ready-file contradict each other: give one');
  if (options.dryRun !== true && fromFlag('output')) throw new UsageError('--output only applies to --dry-run');
  if (options.requireEnvoyPrestop !== true && fromFlag('envoyPrestopWait')) {
    throw new UsageError('--envoy-prestop-wait only applies to --require-envoy-prestop');
  }
  // With total, the ignore list only shapes the new connections a quiet period counts.
  if (options.connections === 'total' && options.quietPeriod === 0) {
    const why = 'it only applies to --connections listeners or a --quiet-period';
    if (fromFlag('ignoreListener')) throw new UsageError(`--ignore-listener does nothing here: ${why}`);
    if (sourceOf('ignoreListener') === 'env') process.stderr.write(`warning: ${ENV.ignoreListener} is ignored: ${why}\n`);
  }
}
