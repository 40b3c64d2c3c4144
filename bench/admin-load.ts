// 5. Admin load: the requests `shutdown` sends to Envoy's admin API at default settings, phase by
// phase of a drain, and why each read came (the regular cadence, the end game's pace, the
// socket-count hint, or the reads' share of Envoy), from the hook's own debug lines, checked against the record of a relay in
// front of the real Envoy's admin API.
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { ReadReason } from '../src/drain/schedule.js';
import { envoyVersion } from '../test/support/real-envoy/binary.js';
import { isStatsRead } from '../test/support/stats-reads.js';
import { FORMS, progress, ratio, type Scenario, sleep, spawnTimed, table, withTarget } from './support/harness.js';

/** The defaults this scenario relies on: --min-drain-duration 10s, --check-interval 1s. */
const DEFAULT_MIN_DRAIN_MS = 10_000;
const HELD = 8;
/** 2 s past the minimum drain, 5 close at once (3 left: the end game), then one a second. */
const FIRST_CLOSE_AT_MS = DEFAULT_MIN_DRAIN_MS + 2_000;
const FIRST_CLOSE = 5;
const THEN_EVERY_MS = 1_000;
/** Envoy Gateway reads once, then sleeps 1 s. */
const EG_READS_PER_S = 1;

type Mode = 'total' | 'listeners';
type Trigger = ReadReason;

/** One read as the hook logs it at debug level: when on the drain's clock, and why. */
interface Read {
  readonly elapsedMs: number;
  readonly trigger: Trigger;
}

interface ModeResult {
  readonly reads: readonly Read[];
  /** The drain's clock when the last connection closed, and when the hook exited (its own `shutdown finished` line). */
  readonly lastCloseMs: number;
  readonly finishedMs: number;
  /** /stats calls in the relay's record: the hook's count checked against Envoy's. */
  readonly relayReads: number;
  readonly otherCalls: number;
}

async function runMode(mode: Mode): Promise<ModeResult> {
  return withTarget(`admin-load-${mode}`, async (target, dir) => {
    const readyFile = join(dir, 'ready');
    await target.open(HELD);
    await target.statReaches('server.total_connections', HELD, 7_000); // a stats flush
    const drainCall = target.nextCall('/drain_listeners');
    // Defaults everywhere but the log level; `total` is the default source, `listeners` is passed explicitly.
    const args = [
      'shutdown',
      '--admin-address',
      target.adminAddress,
      '--ready-file',
      readyFile,
      '--log-level',
      'debug',
      ...(mode === 'listeners' ? ['--connections', 'listeners'] : []),
    ];
    const shutdown = spawnTimed([...FORMS.executable.command, ...args], { stdout: 'pipe' });
    let stdout = '';
    shutdown.child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    const drainAt = (await drainCall).receivedAt;
    await sleep(drainAt + FIRST_CLOSE_AT_MS - performance.now());
    await target.close(FIRST_CLOSE);
    let lastCloseAt = 0;
    for (let left = HELD - FIRST_CLOSE; left > 0; left -= 1) {
      await sleep(THEN_EVERY_MS);
      lastCloseAt = await target.close(1);
    }
    const exit = await shutdown.exited;
    if (exit.code !== 0) throw new Error(`shutdown exited ${exit.code ?? exit.signal}: ${exit.stderr}`);
    const lines = stdout
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { msg: string; elapsedMs?: number; why?: Trigger });
    const reads = lines.filter((l) => l.msg === 'reading connections').map((l) => ({ elapsedMs: l.elapsedMs ?? Number.NaN, trigger: l.why ?? 'cadence' }));
    const finished = lines.find((l) => l.msg === 'shutdown finished');
    // The drain's clock starts when Envoy answered the drain call: near enough to when the relay saw it.
    return {
      reads,
      lastCloseMs: lastCloseAt - drainAt,
      finishedMs: finished?.elapsedMs ?? Number.NaN,
      relayReads: target.calls.filter(isStatsRead).length,
      otherCalls: target.calls.filter((call) => !isStatsRead(call)).length,
    };
  });
}

interface PhaseSpec {
  readonly label: string;
  readonly from: number;
  readonly to: (r: ModeResult) => number;
}

const PHASES: readonly PhaseSpec[] = [
  { label: `minimum drain (0–${DEFAULT_MIN_DRAIN_MS / 1_000} s, ${HELD} connections)`, from: 0, to: () => DEFAULT_MIN_DRAIN_MS },
  { label: `past it, ${HELD} left (${DEFAULT_MIN_DRAIN_MS / 1_000}–${FIRST_CLOSE_AT_MS / 1_000} s)`, from: DEFAULT_MIN_DRAIN_MS, to: () => FIRST_CLOSE_AT_MS },
  { label: `end game: ${HELD - FIRST_CLOSE} left, then one closing a second, to the hook's exit`, from: FIRST_CLOSE_AT_MS, to: (r) => r.finishedMs + 1 },
];

function phaseRow(mode: Mode, r: ModeResult, spec: PhaseSpec, index: number): string[] {
  const to = spec.to(r);
  const reads = r.reads.filter((read) => read.elapsedMs >= spec.from && read.elapsedMs < to);
  const seconds = (to - spec.from) / 1_000;
  const by = (...triggers: Trigger[]): string => String(reads.filter((read) => triggers.includes(read.trigger)).length);
  const rate = reads.length / seconds;
  return [
    index === 0 ? `\`--connections ${mode}\`${mode === 'total' ? ' (default)' : ''}` : '',
    spec.label,
    `${reads.length} in ${seconds.toFixed(1)} s`,
    `${rate.toFixed(1)}/s`,
    by('first', 'cadence', 'quiet-period', 'may-finish', 'refused', 'timeout'),
    by('end-game'),
    by('socket-closed'),
    by('share'),
    ratio(rate, EG_READS_PER_S),
  ];
}

async function run(): Promise<string> {
  const results: Partial<Record<Mode, ModeResult>> = {};
  for (const mode of ['total', 'listeners'] as const) {
    const r = await runMode(mode);
    results[mode] = r;
    if (r.relayReads !== r.reads.length) throw new Error(`${mode}: the hook logged ${r.reads.length} reads, the relay saw ${r.relayReads}`);
    progress('admin-load', `${mode}: ${r.reads.length} reads, the last connection closed at ${Math.round(r.lastCloseMs)} ms, finished at ${r.finishedMs} ms`);
  }
  const rows = (['total', 'listeners'] as const).flatMap((mode) => PHASES.map((spec, i) => phaseRow(mode, results[mode] as ModeResult, spec, i)));
  const totals = (['total', 'listeners'] as const).map((mode) => {
    const r = results[mode] as ModeResult;
    return `\`${mode}\`: ${r.reads.length + r.otherCalls} admin requests in all, the hook's exit ${Math.round(r.finishedMs - r.lastCloseMs)} ms after the last close (drain clock)`;
  });
  return [
    `\`shutdown\` (single executable) at its defaults (\`--min-drain-duration 10s\`, \`--check-interval 1s\`; \`--connections listeners\` added in the second run; \`--log-level debug\` for one line per read, with its reason) against a real Envoy ${await envoyVersion()} (its default 5 s stats flush), its admin API reached through an in-process relay that records each request (its count of stats reads matches the hook's lines in every run). ${HELD} TCP connections are held; ${(FIRST_CLOSE_AT_MS - DEFAULT_MIN_DRAIN_MS) / 1_000} s after the minimum drain ${FIRST_CLOSE} of them close, then the other ${HELD - FIRST_CLOSE} one a second. Each read's reason, as \`src/drain/schedule.ts\` gives it: "cadence", the check interval (and the read at the end of the minimum drain); "end game", once the drain may end: 400 ms with three left, 100 ms with two, 25 ms with one, a quarter of the check interval as a safety net while the socket count is watched; "socket closed", the namespace's TCP socket count (/proc/net/sockstat, looked at after the minimum drain while at most 3 connections hold the drain: every 20 ms with one, 80 ms with two, 320 ms with three; \`listeners\` only) dropped; "held to Envoy's share", a read the reads' measured share of Envoy's main thread held back. Every process of this bench shares one network namespace, so each close drops it more than once (the client's side, Envoy's, the TCP proxy's upstream connection and the sink's side). Besides the reads, each drain sent ${results.total?.otherCalls ?? '?'} other calls (the health-check failure and the drain itself). With \`total\`, the count is as old as Envoy's last stats flush, so the hint would not help, and the drain ends only at the flush after the last close, the end game reading at its pace until then.`,
    '',
    table(
      [
        'connection source',
        'phase (drain clock)',
        'reads',
        'per second',
        'cadence',
        'end game',
        'socket closed',
        "held to Envoy's share",
        "vs Envoy Gateway's 1 read/s",
      ],
      rows,
    ),
    '',
    `${totals.join('; ')}. Each read is one small \`GET /stats/prometheus?filter=…\` on a kept-alive connection (no new TCP handshake per read): the first in full, the rest \`usedonly\`.`,
  ].join('\n');
}

export const adminLoad: Scenario = { name: 'admin-load', title: '5. Admin load', run };
