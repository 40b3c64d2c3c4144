// The large-config scenario's drop-in drains: at one size, one drain through one hook (our
// `shutdown`, or the single executable called as Envoy Gateway's or Contour's own hook) in the
// sandboxed pod the drop-in test runs (test/support/dropin/large-config-pod.ts): what the hook
// logged at its end, whether the idle pool outlived it, the scraper's answers, the admin reads the
// hook made, and what one of them cost Envoy (replayed inside the pod once the hook exited).

import { resolve } from 'node:path';
import { build } from 'esbuild';
import { drainLargePod, type Hook, logged } from '../../test/support/dropin/large-config-pod.js';
import type { LargeConfigSize } from '../../test/support/large-config/expand.js';
import type { ReadCost } from '../../test/support/real-envoy/read-cost.js';
import { isStatsRead } from '../../test/support/stats-reads.js';

/** The pod runner, bundled by the bench beside the one the tests' global setup bundles. */
export const DROPIN_RUNNER = resolve('test/.build/bench-dropin-pod-main.cjs');
/** Envoy may take this long to load the largest configurations on a busy machine (as the bench's own drains allow). */
const ENVOY_START_BOUND_MS = 300_000;

export interface DropInDrain {
  /** The hook's own word: `drained`, `timeout`, …, from its "shutdown finished" line. */
  readonly result: string;
  readonly exitCode: number | null;
  /** The "shutdown finished" line's elapsedMs: the drain's duration as the hook measured it. */
  readonly drainMs: number;
  /** The idle pool's HTTP/1.1 and HTTP/2 connections, still open when the hook exited (its release). */
  readonly idlePoolOpen: readonly boolean[];
  readonly scrapesSent: number;
  /** Scrapes answered with anything but 200 (0: the request failed). */
  readonly scrapesLost: number;
  /** GET /stats and GET /stats/prometheus the hook made, and every GET. */
  readonly statsReads: number;
  readonly gets: number;
  /** Envoy's cost per GET the hook made. */
  readonly readCost: ReadCost | undefined;
  readonly envoyStartMs: number;
}

/** Bundles the pod runner (test/support/dropin-pod-main.ts) for the bench. */
export async function buildDropInRunner(): Promise<void> {
  await build({
    entryPoints: ['test/support/dropin-pod-main.ts'],
    outfile: DROPIN_RUNNER,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    logLevel: 'warning',
  });
}

/** One drain through `hook` at `size`. */
export async function drainThroughHook(hook: Hook, size: LargeConfigSize): Promise<DropInDrain> {
  const seen = await drainLargePod(hook, size, { runner: DROPIN_RUNNER, envoyStartBoundMs: ENVOY_START_BOUND_MS, replayReads: true });
  const finished = logged(seen.hook?.stdout ?? '', 'shutdown finished');
  const statuses = seen.scraped?.statuses ?? [];
  const exitCode = seen.hook?.exitCode ?? null;
  return {
    result: typeof finished?.result === 'string' ? finished.result : `no "shutdown finished" line (exit ${exitCode})`,
    exitCode,
    drainMs: typeof finished?.elapsedMs === 'number' ? finished.elapsedMs : Number.NaN,
    idlePoolOpen: seen.idlePoolOpenAtHookExit ?? [],
    scrapesSent: statuses.length,
    scrapesLost: statuses.filter((status) => status !== 200).length,
    statsReads: seen.adminCalls.filter(isStatsRead).length,
    gets: seen.adminCalls.filter((call) => call.method === 'GET').length,
    readCost: seen.readCost,
    envoyStartMs: seen.envoyStartMs,
  };
}
