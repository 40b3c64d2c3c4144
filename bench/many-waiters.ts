// 3. Many waiters: 10,000 concurrent `/shutdown/ready` requests held by one manager (the single
// executable): its extra memory, its CPU time while they wait, and the time to release them all
// once the ready file appears, written atomically as `shutdown` writes it.

import { readdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { build } from 'esbuild';
import { temporaryName } from '../src/handoff/atomic-file.js';
import {
  cleanEnv,
  cpuTimeMs,
  FORMS,
  formatMiB,
  formatMs,
  type Memory,
  medianAndSpread,
  memoryAfter,
  NODE,
  openFilesHardLimit,
  progress,
  ratio,
  type Scenario,
  sleep,
  spawnTimed,
  summarize,
  table,
  until,
  withScratch,
} from './support/harness.js';
import { type RunningManager, startManager } from './support/manager.js';
import type { WaiterClientSummary } from './support/waiter-client.js';

const WAITERS = 10_000;
/** What --max-waiters allows by default: the largest crowd a manager sees unless configured otherwise. */
const DEFAULT_MAX_WAITERS = 1_000;
/** Client processes sharing the waiters, so that no single client's event loop is what we measure. */
const CLIENT_PROCESSES = 4;
const CPU_WINDOW_MS = 5_000;
const ACCEPTANCE_MS = 100;
/** The goal for the last answer: at most this times bare Node's, measured in the same run. */
const GOAL_VS_BARE = 1.2;
/** Indexes into CONFIGURATIONS. */
const [DEFAULTS, WARN, BASELINE, SMALL] = [0, 1, 3, 4] as const;
const MANAGER_ARGS = ['--max-waiters', String(2 * WAITERS), '--drain-start-timeout', '0', '--ready-timeout', '10m'];

interface Configuration {
  readonly label: string;
  /** What runs as the manager: the executable, or the bare Node baseline. */
  readonly command: readonly string[];
  readonly args: readonly string[];
  readonly nodeOptions: string;
  readonly runs: number;
  readonly waiters: number;
  /** Logs waiters' arrivals (in summary) and each release (one line). */
  readonly logsWaiters: boolean;
}

/**
 * The baseline: bare Node holding the same requests, released on the same kind of directory
 * watch with one read of the file, and no other work per request. It takes the manager's
 * arguments and uses --port and --ready-file.
 */
const BARE_NODE_SERVER = `
const { createServer } = require('node:http');
const { existsSync, readFileSync, watch } = require('node:fs');
const { dirname } = require('node:path');
const arg = (name) => process.argv[process.argv.indexOf(name) + 1];
const file = arg('--ready-file');
const held = [];
createServer((req, res) => (req.url === '/healthz' ? res.end('ok') : held.push(res))).listen(Number(arg('--port')));
watch(dirname(file), () => {
  if (!existsSync(file)) return;
  const body = readFileSync(file);
  for (const res of held.splice(0)) res.end(body);
});
`;

/** As shipped; without info lines; with a smaller young generation; bare Node doing nothing else (the floor). */
const CONFIGURATIONS: readonly Configuration[] = [
  { label: 'manager, defaults', command: FORMS.executable.command, args: [], nodeOptions: '', runs: 3, waiters: WAITERS, logsWaiters: true },
  {
    label: 'manager, `--log-level warn`',
    command: FORMS.executable.command,
    args: ['--log-level', 'warn'],
    nodeOptions: '',
    runs: 2,
    waiters: WAITERS,
    logsWaiters: false,
  },
  {
    label: 'manager, NODE_OPTIONS=`--max-semi-space-size=1`',
    command: FORMS.executable.command,
    args: [],
    nodeOptions: '--max-semi-space-size=1',
    runs: 2,
    waiters: WAITERS,
    logsWaiters: true,
  },
  {
    label: 'baseline: bare Node http server, same watch',
    command: [NODE, '-e', BARE_NODE_SERVER],
    args: [],
    nodeOptions: '',
    runs: 2,
    waiters: WAITERS,
    logsWaiters: false,
  },
  { label: 'manager, defaults', command: FORMS.executable.command, args: [], nodeOptions: '', runs: 3, waiters: DEFAULT_MAX_WAITERS, logsWaiters: true },
];

const epochNow = (): number => performance.timeOrigin + performance.now();

interface RoundResult {
  readonly waiters: number;
  readonly idle: Memory;
  readonly waiting: Memory;
  readonly waitCpuMsPerS: number;
  readonly releaseCpuMs: number;
  /** From the file's appearance to the manager's "releasing envoy" line, logged once every answer is written (server side, 1 ms resolution). */
  readonly serverLastMs: number;
  /** From the file's appearance to the first and last answer received by the clients. */
  readonly clientFirstMs: number;
  readonly clientLastMs: number;
  readonly ok: number;
  readonly setupMs: number;
}

async function buildClient(dir: string): Promise<string> {
  const outfile = join(dir, 'waiter-client.cjs');
  await build({
    entryPoints: ['bench/support/waiter-client.ts'],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    logLevel: 'warning',
  });
  return outfile;
}

function startClient(script: string, port: number, count: number): { sent: Promise<void>; done: Promise<WaiterClientSummary> } {
  const client = spawnTimed([NODE, script, String(port), String(count), '60000'], { stdout: 'pipe', raiseOpenFiles: true });
  const lines = createInterface({ input: client.child.stdout as NodeJS.ReadableStream });
  let onSent: () => void = () => {};
  const sent = new Promise<void>((resolve) => (onSent = resolve));
  const done = new Promise<WaiterClientSummary>((resolve, reject) => {
    lines.on('line', (line) => {
      const event = JSON.parse(line) as { event: string };
      if (event.event === 'sent') onSent();
      else resolve(event as WaiterClientSummary);
    });
    void client.exited.then((exit) => reject(new Error(`waiter client exited (${exit.code ?? exit.signal}) without a summary: ${exit.stderr}`)));
  });
  return { sent: Promise.race([sent, done.then(() => undefined)]), done };
}

/** As `shutdown` writes it: the whole report under a temporary name beside it, then one rename. Returns when the rename began. */
function writeReadyFile(path: string): number {
  const temporary = temporaryName(path);
  writeFileSync(temporary, `${JSON.stringify({ result: 'drained', connections: 0, elapsedMs: 1, exitCode: 0, finishedAt: new Date().toISOString() })}\n`);
  const at = epochNow();
  renameSync(temporary, path);
  return at;
}

const isRelease = (line: Readonly<Record<string, unknown>>): boolean => line.msg === 'drain finished: releasing envoy';

/** Every waiter is in: the manager logged the last one, or (log level above info) holds one more open file per waiter. */
async function allWaiting(manager: RunningManager, { logsWaiters, waiters }: Configuration, filesBefore: number): Promise<void> {
  if (logsWaiters) {
    await manager.log.waitFor((line) => line.msg === 'waiting for the drain to finish' && line.waiting === waiters, 60_000, 100);
    return;
  }
  const files = (): number => readdirSync(`/proc/${manager.process.pid}/fd`).length;
  await until(() => files() >= filesBefore + waiters, { timeoutMs: 60_000, pollMs: 100, what: 'every waiter connection' });
}

async function round(script: string, configuration: Configuration): Promise<RoundResult> {
  const env = cleanEnv(configuration.nodeOptions === '' ? {} : { NODE_OPTIONS: configuration.nodeOptions });
  const manager: RunningManager = await startManager(configuration.command, [...MANAGER_ARGS, ...configuration.args], { raiseOpenFiles: true, env });
  const { logsWaiters, waiters } = configuration;
  const pid = manager.process.pid;
  try {
    const idle = await memoryAfter(pid, 2_000);
    const filesBefore = readdirSync(`/proc/${pid}/fd`).length;
    const setupStart = performance.now();
    const clients = Array.from({ length: CLIENT_PROCESSES }, () => startClient(script, manager.port, waiters / CLIENT_PROCESSES));
    await Promise.all(clients.map((client) => client.sent));
    await allWaiting(manager, configuration, filesBefore);
    const setupMs = performance.now() - setupStart;
    const waiting = await memoryAfter(pid, 1_000);
    const cpuBefore = cpuTimeMs(pid);
    await sleep(CPU_WINDOW_MS);
    const cpuWaiting = cpuTimeMs(pid);

    const appearedAt = writeReadyFile(manager.readyFile);
    const summaries = await Promise.all(clients.map((client) => client.done));
    // One line per release, with how many waiters it answered.
    const releases = (): number => manager.log.lines.filter(isRelease).reduce((sum, line) => sum + Number(line.waiters), 0);
    if (logsWaiters)
      await until(
        () => {
          manager.log.poll();
          return releases() >= waiters;
        },
        { timeoutMs: 30_000, pollMs: 50, what: 'the release log line' },
      );
    const releaseCpuMs = cpuTimeMs(pid) - cpuWaiting;
    const releaseTimes = manager.log.lines.filter(isRelease).map((line) => Date.parse(String(line.time)));
    if (releaseTimes.length === 0) releaseTimes.push(Number.NaN);
    return {
      waiters,
      idle,
      waiting,
      waitCpuMsPerS: ((cpuWaiting - cpuBefore) * 1_000) / CPU_WINDOW_MS,
      releaseCpuMs,
      serverLastMs: Math.max(...releaseTimes) - appearedAt,
      clientFirstMs: Math.min(...summaries.map((s) => s.first)) - appearedAt,
      clientLastMs: Math.max(...summaries.map((s) => s.last)) - appearedAt,
      ok: summaries.reduce((sum, s) => sum + s.ok, 0),
      setupMs,
    };
  } finally {
    await manager.stop();
  }
}

async function run(): Promise<string> {
  const limit = openFilesHardLimit();
  // The manager holds one socket per waiter, plus its own few files.
  if (limit < WAITERS + 100)
    throw new Error(`the hard limit on open files is ${limit}: ${WAITERS} waiters need more (raise it, e.g. \`ulimit -Hn\` as root with CAP_SYS_RESOURCE)`);
  const results: RoundResult[][] = CONFIGURATIONS.map(() => []);
  await withScratch('waiters', async (dir) => {
    const script = await buildClient(dir);
    // Interleaved, so that a noisy minute of this shared machine does not land on one configuration.
    const rounds = Math.max(...CONFIGURATIONS.map((c) => c.runs));
    for (let n = 0; n < rounds; n += 1) {
      for (const [index, configuration] of CONFIGURATIONS.entries()) {
        if (n >= configuration.runs) continue;
        const result = await round(script, configuration);
        results[index]?.push(result);
        progress(
          'many-waiters',
          `${configuration.label}, ${configuration.waiters} waiters, run ${n + 1}: ${result.ok} answered 200, last answer ${formatMs(result.clientLastMs)} after the file appeared`,
        );
      }
    }
  });
  return report(results);
}

function report(results: ReadonlyArray<readonly RoundResult[]>): string {
  type Pick = (r: RoundResult) => number;
  const of = (index: number, pick: Pick): ReturnType<typeof summarize> => summarize((results[index] ?? []).map(pick));
  const cells = (pick: Pick, format: (v: number) => string): string[] => CONFIGURATIONS.map((_, index) => medianAndSpread(of(index, pick), format, 'min-max'));
  const bytes = (v: number): string => `${Math.round(v).toLocaleString('en')} B`;
  const perWaiter: Pick = (r) => ((r.waiting.anonKiB - r.idle.anonKiB) * 1024) / r.waiters;
  const rows = [
    ['idle, before any waiter: RssAnon', ...cells((r) => r.idle.anonKiB, formatMiB)],
    ['with every waiter in: RSS', ...cells((r) => r.waiting.rssKiB, formatMiB)],
    ['with every waiter in: RssAnon', ...cells((r) => r.waiting.anonKiB, formatMiB)],
    [
      'RssAnon with waiters ÷ idle RssAnon (same run)',
      ...CONFIGURATIONS.map((_, i) => ratio(of(i, (r) => r.waiting.anonKiB).median, of(i, (r) => r.idle.anonKiB).median)),
    ],
    ['extra RssAnon per waiter', ...cells(perWaiter, bytes)],
    ['extra RssAnon per waiter, vs the bare Node baseline', ...CONFIGURATIONS.map((_, i) => ratio(of(i, perWaiter).median, of(BASELINE, perWaiter).median))],
    [
      `CPU while they wait (utime+stime over ${CPU_WINDOW_MS / 1000} s)`,
      ...cells(
        (r) => r.waitCpuMsPerS,
        (v) => `${v.toFixed(0)} ms/s`,
      ),
    ],
    ['file appears → release logged, every answer written (server)', ...cells((r) => r.serverLastMs, formatMs)],
    ['file appears → **last answer received** (clients)', ...cells((r) => r.clientLastMs, formatMs)],
    [
      'last answer received, vs the bare Node baseline (same run)',
      ...CONFIGURATIONS.map((_, i) => ratio(of(i, (r) => r.clientLastMs).median, of(BASELINE, (r) => r.clientLastMs).median)),
    ],
    ["manager's CPU time for the whole release", ...cells((r) => r.releaseCpuMs, formatMs)],
    [
      'answered 200',
      ...cells(
        (r) => r.ok,
        (v) => v.toFixed(0),
      ),
    ],
    ['opening the waiters (informational)', ...cells((r) => r.setupMs, formatMs)],
  ];
  const serverLast = of(DEFAULTS, (r) => r.serverLastMs).median;
  const clientLast = of(DEFAULTS, (r) => r.clientLastMs).median;
  const quiet = of(WARN, (r) => r.clientLastMs).median;
  const floor = of(BASELINE, (r) => r.clientLastMs).median;
  const met = Math.max(serverLast, clientLast) <= ACCEPTANCE_MS;
  const vsBare = clientLast / floor;
  return [
    `The manager is the single executable with \`${MANAGER_ARGS.join(' ')}\` (no drain runs in this scenario, so the no-drain watchdog is off), its log going to a file, its soft limit on open files raised to the hard limit (${openFilesHardLimit()} here; \`ulimit -n\` in a \`bash -c\` that then execs it). ${CLIENT_PROCESSES} client processes (raw sockets, no HTTP parser) each open a quarter of the connections and send one \`GET /shutdown/ready\` on each: ${WAITERS.toLocaleString('en')} waiters, and in the last column ${DEFAULT_MAX_WAITERS.toLocaleString('en')}, the most a manager holds at its default \`--max-waiters\`. Once every waiter is in (the manager logged the last one, or, without that log line, holds one more file per waiter): memory from \`/proc/<pid>/status\` 1 s later, CPU from \`/proc/<pid>/stat\` over ${CPU_WINDOW_MS / 1000} s; then the bench writes the ready file as \`shutdown\` does (the report under a temporary name, then \`rename\`); time zero is the moment the rename starts. Release is measured on both sides: server side from the manager's own \`drain finished: releasing envoy\` line, one per release, logged once every answer is written (1 ms resolution; none at \`--log-level warn\`); client side when each answer's first bytes arrive, on the same clock. Each run has a fresh manager; runs of the configurations are interleaved; median (min–max) over the runs.`,
    '',
    table(['measure', ...CONFIGURATIONS.map((c) => `${c.label}, **${c.waiters.toLocaleString('en')} waiters** (${c.runs} runs)`)], rows),
    '',
    `**Goal** (last answer ≤ ${GOAL_VS_BARE}× bare Node's, same run): ${vsBare <= GOAL_VS_BARE ? 'met' : 'NOT met'} — at defaults the last answer is received ${formatMs(clientLast)} after the file appeared, ${vsBare.toFixed(2)}× bare Node's ${formatMs(floor)} (${formatMs(quiet)} at \`--log-level warn\`), and the release line is logged ${formatMs(serverLast)} after it; each waiter costs ${bytes(of(DEFAULTS, perWaiter).median)} of RssAnon (bare Node: ${bytes(of(BASELINE, perWaiter).median)}). One directory-watch event and one read of the file release the whole crowd in one pass: the answer (headers and body) is built once, each response gets one \`writeHead\` and one \`end\` (one \`write\` per socket, as bare Node), and one log line says how many were answered. A waiter holds one map entry and one \`close\` listener shared by all; the ready-file wait, the no-drain watchdog and the \`--ready-timeout\` timer are one each for the crowd. What bounds the rest is Node's own cost of ending ${WAITERS.toLocaleString('en')} HTTP responses on one core (release CPU ${formatMs(of(DEFAULTS, (r) => r.releaseCpuMs).median)} against bare Node's ${formatMs(of(BASELINE, (r) => r.releaseCpuMs).median)}, which includes the ${WAITERS.toLocaleString('en')} connections the clients close right after).`,
    '',
    `**Earlier goal** (all ${WAITERS.toLocaleString('en')} released within ${ACCEPTANCE_MS} ms of the file appearing): ${met ? 'met' : 'NOT met'}: bare Node itself needs ${formatMs(floor)} on this machine. At the default \`--max-waiters\` (${DEFAULT_MAX_WAITERS.toLocaleString('en')}) the last answer arrives ${formatMs(of(SMALL, (r) => r.clientLastMs).median)} after the file appeared (${of(SMALL, (r) => r.clientLastMs).median <= ACCEPTANCE_MS ? 'within' : 'over'} ${ACCEPTANCE_MS} ms); kubelet sends one request per pod termination.`,
  ].join('\n');
}

export const manyWaiters: Scenario = { name: 'many-waiters', title: '3. Many waiters', run };
