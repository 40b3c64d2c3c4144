// 1. Release latency: from the moment Envoy's last connection closes to (a) `shutdown` exiting and
// (b) `/shutdown/ready` answering, with the minimum drain already over. This tool (the single
// executable, both connection sources, default --check-interval) against the floor: one admin
// round trip. The peers' real binaries are measured beside ours in peers.ts.

import { execFile } from 'node:child_process';
import { rmSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import { HINT_POLL_MS } from '../src/drain/schedule.js';
import { statsPath } from '../src/envoy/stats-reader.js';
import { envoyVersion } from '../test/support/real-envoy/binary.js';
import {
  DrainTarget,
  FORMS,
  formatMs,
  medianAndSpread,
  NODE,
  progress,
  ratio,
  type Scenario,
  sleep,
  spawnTimed,
  stratifiedOffsets,
  summarize,
  table,
} from './support/harness.js';
import { awaitReady, type RunningManager, startManager } from './support/manager.js';

/** Short, and over by the time the last connection closes (the end game is what we measure). */
const MIN_DRAIN_MS = 1_000;
const CLOSE_AFTER_MIN_DRAIN_MS = 300;
const FLOOR_SAMPLES = 200;
const ACCEPTANCE_MS = 50;
const execFileAsync = promisify(execFile);

type Design = 'listeners' | 'total';

interface DesignSpec {
  readonly label: string;
  readonly source: string;
  readonly runs: number;
  /** The close is spread evenly over one period of what delays detection: the check interval, or the stats flush. */
  readonly periodMs: number;
}

const DESIGNS: Readonly<Record<Design, DesignSpec>> = {
  listeners: { label: 'this tool, `--connections listeners`', source: 'live `listener.*.downstream_cx_active`', runs: 12, periodMs: 1_000 },
  total: { label: 'this tool, `--connections total` (default)', source: '`server.total_connections` (stats flush every 5 s)', runs: 8, periodMs: 5_000 },
};

interface Sample {
  /** (a): `shutdown` exited. */
  readonly exitMs: number;
  /** (b): `/shutdown/ready` answered. */
  readonly readyMs: number;
  /** The read that saw the drain over. */
  readonly detectMs: number;
}

const isWaiting = (line: Readonly<Record<string, unknown>>): boolean => line.msg === 'waiting for the drain to finish';

/**
 * One long-lived Envoy per design, as Envoy is long-lived: its single held connection is opened
 * right after the previous run, and for `total` the run waits until a stats flush has counted it.
 */
async function prepare(target: DrainTarget, design: Design): Promise<void> {
  if ((await target.active()) === 0) await target.open(1);
  if (design === 'listeners') return;
  await target.statReaches('server.total_connections', 1, 7_000); // a stats flush that counts the connection
}

/** Closes the held connection `offsetMs` after the minimum drain plus a margin; returns time zero. */
async function closeAfterMinimumDrain(target: DrainTarget, drainAt: number, offsetMs: number): Promise<number> {
  await sleep(drainAt + MIN_DRAIN_MS + CLOSE_AFTER_MIN_DRAIN_MS + offsetMs - performance.now());
  return target.close(1);
}

function sample(target: DrainTarget, closedAt: number, exitAt: number, readyAt: number): Sample {
  const deciding = target.reads.at(-1);
  const detectMs = deciding !== undefined && deciding >= closedAt ? deciding - closedAt : Number.NaN;
  return { exitMs: exitAt - closedAt, readyMs: readyAt - closedAt, detectMs };
}

async function runTool(mode: 'listeners' | 'total', offsetMs: number, target: DrainTarget, manager: RunningManager): Promise<Sample> {
  await prepare(target, mode);
  rmSync(manager.readyFile, { force: true });
  const waitersBefore = manager.log.lines.filter(isWaiting).length;
  const ready = awaitReady(manager.port);
  await manager.log.waitFor(() => manager.log.lines.filter(isWaiting).length > waitersBefore, 5_000, 5);
  const drainCall = target.nextCall('/drain_listeners');
  const args = [
    'shutdown',
    '--admin-address',
    target.adminAddress,
    '--ready-file',
    manager.readyFile,
    '--connections',
    mode,
    '--min-drain-duration',
    `${MIN_DRAIN_MS}ms`,
  ];
  const shutdown = spawnTimed([...FORMS.executable.command, ...args]);
  const closedAt = await closeAfterMinimumDrain(target, (await drainCall).receivedAt, offsetMs);
  const [exit, answer] = await Promise.all([shutdown.exited, ready]);
  if (exit.code !== 0 || answer.status !== 200) throw new Error(`shutdown exit ${exit.code ?? exit.signal}, /shutdown/ready ${answer.status}: ${exit.stderr}`);
  return sample(target, closedAt, exit.at, answer.at);
}

/** Another process's GET on a kept-alive connection, timed from request to the end of the body. */
const FLOOR_CLIENT = `
const http = require('node:http');
const [host, port, path, count] = process.argv.slice(1);
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
const get = () => new Promise((resolve, reject) => {
  const start = performance.now();
  http.get({ host, port: Number(port), path, agent }, (res) => { res.resume(); res.on('end', () => resolve(performance.now() - start)); }).on('error', reject);
});
(async () => {
  const times = [];
  for (let n = -20; n < Number(count); n += 1) { const t = await get(); if (n >= 0) times.push(t); }
  agent.destroy();
  process.stdout.write(JSON.stringify(times));
})();
`;

/** The floor: one admin round trip, the tool's usedonly stats read of the listeners, from another process as the tool's are. */
async function measureFloor(): Promise<number[]> {
  const target = await DrainTarget.start();
  try {
    await target.open(1);
    const separator = target.adminAddress.lastIndexOf(':');
    const [host, port] = [target.adminAddress.slice(0, separator), target.adminAddress.slice(separator + 1)];
    const path = statsPath('prometheus', 'used', {});
    const { stdout } = await execFileAsync(NODE, ['-e', FLOOR_CLIENT, host, String(port), path, String(FLOOR_SAMPLES)], { env: {} });
    return JSON.parse(stdout) as number[];
  } finally {
    await target.stop();
  }
}

async function run(): Promise<string> {
  const samples: Record<Design, Sample[]> = { listeners: [], total: [] };
  const offsets = Object.fromEntries(Object.entries(DESIGNS).map(([design, spec]) => [design, stratifiedOffsets(spec.runs, spec.periodMs)])) as Record<
    Design,
    number[]
  >;
  const targets: Record<Design, DrainTarget> = { listeners: await DrainTarget.start(), total: await DrainTarget.start() };
  const manager = await startManager(FORMS.executable.command);
  try {
    for (const target of Object.values(targets)) await target.open(1);
    // Interleaved, so that a noisy minute on this shared machine hits every design alike.
    const rounds = Math.max(...Object.values(DESIGNS).map((spec) => spec.runs));
    for (let round = 0; round < rounds; round += 1) {
      for (const design of Object.keys(DESIGNS) as Design[]) {
        const offset = offsets[design][round];
        if (offset === undefined) continue;
        const target = targets[design];
        const result = await runTool(design, offset, target, manager);
        samples[design].push(result);
        await target.open(1); // for the next run: the flush counts it meanwhile
        progress('release-latency', `${design} run ${round + 1}: exit ${formatMs(result.exitMs)}, ready ${formatMs(result.readyMs)}`);
      }
    }
  } finally {
    await manager.stop();
    for (const target of Object.values(targets)) await target.stop();
  }
  const floor = summarize(await measureFloor());
  return report(samples, floor, await envoyVersion());
}

function report(samples: Record<Design, Sample[]>, floor: ReturnType<typeof summarize>, version: string): string {
  const of = (design: Design, key: keyof Sample): ReturnType<typeof summarize> => summarize(samples[design].map((sample) => sample[key]));
  const rows = (Object.keys(DESIGNS) as Design[]).map((design) => {
    const ready = of(design, 'readyMs');
    return [
      DESIGNS[design].label,
      DESIGNS[design].source,
      String(ready.n),
      medianAndSpread(of(design, 'exitMs'), formatMs),
      medianAndSpread(ready, formatMs),
      ratio(ready.median, floor.median),
    ];
  });
  rows.push([
    'floor: one admin round trip from another process (the usedonly stats read, kept-alive connection)',
    'same Envoy, through the same relay',
    String(floor.n),
    '—',
    medianAndSpread(floor, formatMs),
    '1.00×',
  ]);
  const breakdown = (Object.keys(DESIGNS) as Design[]).map((design) => {
    const detect = of(design, 'detectMs').median;
    return [DESIGNS[design].label, formatMs(detect), formatMs(of(design, 'readyMs').median - detect), formatMs(of(design, 'exitMs').median - detect)];
  });
  const listeners = of('listeners', 'readyMs').median;
  const listenersExit = of('listeners', 'exitMs').median;
  const listenersDetect = of('listeners', 'detectMs').median;
  const met = Math.max(listeners, listenersExit) < ACCEPTANCE_MS;
  return [
    `Both processes are the single executable (\`shutdown\` with \`--min-drain-duration ${MIN_DRAIN_MS / 1000}s\` and the default \`--check-interval 1s\`; \`shutdown-manager\` with its defaults), against a real Envoy ${version} with its default 5 s stats flush, its admin API reached through an in-process relay that times each request (the tool and the floor alike). One TCP connection is held on a TCP-proxy listener and closed ${CLOSE_AFTER_MIN_DRAIN_MS} ms plus an offset after the minimum drain ended; offsets are spread evenly over one period of what delays detection (1 s check interval, or the 5 s flush for \`total\`) and shuffled. Time zero is the moment the bench closes the connection (Envoy's live gauge is then polled until it shows it gone); (a) is when this process sees \`shutdown\` exit, (b) when the response headers of a \`GET /shutdown/ready\` sent before the drain arrive. Every timestamp is taken in the bench process (\`performance.now()\`). Runs of the two connection sources are interleaved. Section 9 (peers) measures the same release beside Envoy Gateway's and Contour's real binaries.`,
    '',
    table(
      ['design', 'connection count from', 'runs', '(a) `shutdown` exits: median (p10–p90)', '(b) `/shutdown/ready` answers: median (p10–p90)', '(b) vs floor'],
      rows,
    ),
    '',
    'Where the time goes (medians, from time zero): the read that saw the drain over, then the answer and the exit.',
    '',
    table(['design', 'close → deciding read', 'deciding read → `/shutdown/ready` answered', 'deciding read → `shutdown` exited'], breakdown),
    '',
    `**Goal** (median under ${ACCEPTANCE_MS} ms for \`--connections listeners\` at default settings): ${met ? 'met' : 'NOT met'} — ${formatMs(listeners)} to \`/shutdown/ready\`, ${formatMs(listenersExit)} to \`shutdown\` exiting. What bounds it: the read that sees the connection gone comes ${formatMs(listenersDetect)} after the close (the pod's TCP socket count, looked at every ${HINT_POLL_MS} ms with one connection left, brings the read at once when it drops; the bench's close, Envoy's close and the TCP proxy's upstream close each drop it); then ${formatMs(listeners - listenersDetect)} to write the ready file (temporary file + rename), for the manager's directory watch to fire and to read the file and answer; \`shutdown\` exiting takes ${formatMs(listenersExit - listenersDetect)} after that read (closing its admin connection, a synchronous log line, process teardown). With \`--connections total\` the 0–5 s wait for Envoy's next stats flush dominates everything else.`,
  ].join('\n');
}

export const releaseLatency: Scenario = { name: 'release-latency', title: '1. Release latency', run };
