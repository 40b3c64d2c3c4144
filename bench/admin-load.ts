// 5. Admin load: the requests per second `shutdown` sends to Envoy's admin API at default
// settings, in the steady phase of a drain and in its end game (fast reads), counted from the
// record of a relay in front of the real Envoy's admin API.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { envoyVersion } from '../test/support/real-envoy/binary.js';
import { DrainTarget } from './support/drain-target.js';
import { FORMS, sleep, spawnTimed } from './support/processes.js';
import { type Scenario, progress } from './support/scenario.js';
import { formatMs, ratio, summarize, table } from './support/stats.js';

/** The defaults this scenario relies on: --min-drain-duration 10s, --check-interval 1s. */
const DEFAULT_MIN_DRAIN_MS = 10_000;
const HELD = 8;
/** Closing these leaves 3 connections: within the 5 of the threshold that turn the fast reads on. */
const FIRST_CLOSE = 5;
const STEADY_AFTER_MIN_DRAIN_MS = 2_000;
const END_GAME_MS = 3_000;
/** Two reads closer than this belong to the end game. */
const FAST_GAP_MS = 100;
/** Envoy Gateway reads once, then sleeps 1 s. */
const EG_READS_PER_S = 1;

type Mode = 'total' | 'listeners';

interface Phase {
  readonly reads: number;
  readonly seconds: number;
  /** Reads in each whole second of the phase. */
  readonly perSecond: number[];
}

interface ModeResult {
  readonly steady: Phase;
  readonly endGame: Phase;
  readonly otherCalls: number;
}

function phase(reads: readonly number[], from: number, to: number): Phase {
  const inside = reads.filter((t) => t >= from && t <= to);
  const perSecond: number[] = [];
  for (let start = from; start + 1_000 <= to; start += 1_000) perSecond.push(inside.filter((t) => t >= start && t < start + 1_000).length);
  return { reads: inside.length, seconds: (to - from) / 1_000, perSecond };
}

async function runMode(mode: Mode, readyFile: string): Promise<ModeResult> {
  const target = await DrainTarget.start();
  try {
    await target.open(HELD);
    await target.statReaches('server.total_connections', HELD, 7_000); // a stats flush
    const drainCall = target.nextCall('/drain_listeners');
    // Defaults everywhere; `total` is the default source, `listeners` is passed explicitly.
    const shutdown = spawnTimed([...FORMS.executable.command, 'shutdown', '--admin-address', target.adminAddress, '--ready-file', readyFile, ...(mode === 'listeners' ? ['--connections', 'listeners'] : [])]);
    const drainAt = (await drainCall).receivedAt;
    await sleep(drainAt + DEFAULT_MIN_DRAIN_MS + STEADY_AFTER_MIN_DRAIN_MS - performance.now());
    const steadyEnd = await target.close(FIRST_CLOSE);
    await sleep(END_GAME_MS);
    await target.close();
    const exit = await shutdown.exited;
    if (exit.code !== 0) throw new Error(`shutdown exited ${exit.code ?? exit.signal}: ${exit.stderr}`);
    const reads = target.reads.filter((t) => t >= drainAt);
    // The end game: from the first read that came fast after the previous one, to the last read.
    const firstFast = reads.findIndex((t, i) => i > 0 && t - (reads[i - 1] as number) < FAST_GAP_MS);
    const endStart = firstFast > 0 ? (reads[firstFast - 1] as number) : Number.NaN;
    return {
      steady: phase(reads, drainAt, Math.min(steadyEnd, endStart)),
      endGame: phase(reads, endStart, reads.at(-1) ?? Number.NaN),
      otherCalls: target.calls.filter((call) => call.path !== '/stats').length,
    };
  } finally {
    await target.stop();
  }
}

async function run(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-admin-'));
  const results: Partial<Record<Mode, ModeResult>> = {};
  try {
    for (const mode of ['total', 'listeners'] as const) {
      results[mode] = await runMode(mode, join(dir, `ready-${mode}`));
      progress('admin-load', `${mode}: ${results[mode]?.steady.reads} steady reads, ${results[mode]?.endGame.reads} end-game reads`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const rate = (p: Phase): number => p.reads / p.seconds;
  const spread = (p: Phase): string => {
    const s = summarize(p.perSecond);
    return s.n === 0 ? '—' : `${s.min}–${s.max}`;
  };
  const rows = (['total', 'listeners'] as const).flatMap((mode) => {
    const r = results[mode] as ModeResult;
    return [
      [`\`--connections ${mode}\`${mode === 'total' ? ' (default)' : ''}`, 'steady (drain start → 2 s past the minimum drain)', `${rate(r.steady).toFixed(2)}/s`, spread(r.steady), `${r.steady.reads} in ${r.steady.seconds.toFixed(1)} s`, ratio(rate(r.steady), EG_READS_PER_S)],
      ['', 'end game (fast reads, ≤ 5 connections left)', `${rate(r.endGame).toFixed(1)}/s`, spread(r.endGame), `${r.endGame.reads} in ${formatMs(r.endGame.seconds * 1_000)}`, ratio(rate(r.endGame), EG_READS_PER_S)],
    ];
  });
  return [
    `\`shutdown\` (single executable) at its defaults (\`--min-drain-duration 10s\`, \`--check-interval 1s\`; \`--connections listeners\` added in the second run) against a real Envoy ${await envoyVersion()} (its default 5 s stats flush), its admin API reached through an in-process relay that records each request. ${HELD} TCP connections are held; ${STEADY_AFTER_MIN_DRAIN_MS / 1000} s after the minimum drain ${FIRST_CLOSE} of them close (3 left: a read every 400 ms; every 25 ms only once one is left), and ${END_GAME_MS / 1000} s later the rest. Reads are the \`GET /stats\` calls in the relay's record, timed on the bench's clock; "per second" is the spread of the counts in each whole second of the phase (min–max). Besides the reads, each drain sent ${results.total?.otherCalls ?? '?'} other calls (the health-check failure and the drain itself). With \`total\`, the end game starts and ends at Envoy's stats flushes (the count is 5 s stale), so it lasts longer. One run per mode: the per-second counts are the spread.`,
    '',
    table(['connection source', 'phase', 'reads per second', 'per second (min–max)', 'reads', "vs Envoy Gateway's 1 read/s"], rows),
    '',
    'Each read is one small `GET /stats?filter=…&format=json` on a kept-alive connection (no new TCP handshake per read). The end-game rate is capped at 40 reads a second (one every 25 ms, each after the previous answer) and only lasts while at most 5 connections above the threshold remain after the minimum drain.',
  ].join('\n');
}

export const adminLoad: Scenario = { name: 'admin-load', title: '5. Admin load', run };
