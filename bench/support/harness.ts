// The bench's harness: the one place scenarios take their tools from. Timed child processes and
// what /proc says about them, medians and Markdown, the real Envoy as a drain target, and what
// every scenario does around its own measurements: interleaved rounds summarized per measure, a
// scratch directory and Envoy for the length of a run, and the wait for a child to listen.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { DrainTarget } from './drain-target.js';
import { sleep, type TimedChild } from './processes.js';
import { type Memory, readMemory } from './procfs.js';
import { progress } from './scenario.js';
import { type Summary, summarize } from './stats.js';
import { connectsAt } from './timing.js';

export * from './drain-target.js';
export * from './processes.js';
export * from './procfs.js';
export * from './scenario.js';
export * from './stats.js';
export * from './timing.js';

export interface Rounds {
  readonly runs: number;
  /** Rounds run first and thrown away (page cache, CPU frequency). */
  readonly warmUp: number;
  /** Names the scenario in a progress line after each kept round. */
  readonly scenario?: string;
}

/**
 * `runs` rounds of `round`, each measuring every row once, so that the rows of one round share
 * the machine's load of the moment; the warm-up rounds' figures are dropped. Summaries per row.
 */
export async function inRounds<K extends string>(
  { runs, warmUp, scenario }: Rounds,
  round: (n: number) => Promise<Record<K, number>>,
): Promise<Record<K, Summary>> {
  const samples = new Map<K, number[]>();
  for (let n = -warmUp; n < runs; n += 1) {
    const measured = await round(n + warmUp);
    if (n < 0) continue;
    for (const [key, value] of Object.entries(measured) as [K, number][]) samples.set(key, [...(samples.get(key) ?? []), value]);
    if (scenario !== undefined) progress(scenario, `round ${n + 1} of ${runs}`);
  }
  return Object.fromEntries([...samples].map(([key, values]) => [key, summarize(values)])) as Record<K, Summary>;
}

/** A scratch directory for the length of `use`, removed after it whatever happens. */
export async function withScratch<T>(name: string, use: (dir: string) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), `bench-${name}-`));
  try {
    return await use(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The real Envoy as a drain target, and a scratch directory, for the length of `use`. */
export function withTarget<T>(name: string, use: (target: DrainTarget, dir: string) => Promise<T>): Promise<T> {
  return withScratch(name, async (dir) => {
    const target = await DrainTarget.start();
    try {
      return await use(target, dir);
    } finally {
      await target.stop();
    }
  });
}

/** Milliseconds from `child`'s exec to the first TCP connect to 127.0.0.1:`port` that succeeds, polled every `pollMs`. */
export async function listeningAfter(child: TimedChild, port: number, { pollMs = 1, timeoutMs = 10_000 } = {}): Promise<number> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const at = await connectsAt(port);
    if (at !== undefined) return at - child.startedAt;
    if (child.child.exitCode !== null || performance.now() > deadline)
      throw new Error(`pid ${child.pid} never listened on ${port}: ${(await child.exited).stderr}`);
    await sleep(pollMs);
  }
}

/** The process's resident memory once it has been left alone for `ms`. */
export async function memoryAfter(pid: number, ms: number): Promise<Memory> {
  await sleep(ms);
  return readMemory(pid);
}
