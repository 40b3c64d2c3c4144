// 4. Start-up: `shutdown --help` wall time, and the time from exec to the first admin request the
// real Envoy (through a timing relay) receives, for the single executable and for `node dist/…cjs`, as ratios to
// `node -e 0` on the same Node binary, measured in the same run. Then where that time goes: probe
// executables built the same way (nothing; node:http and one request; a bare server), ours
// through commander, without a code cache and with a startup snapshot; and the manager's listening.
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { envoyVersion } from '../test/support/real-envoy/binary.js';
import {
  type DrainTarget,
  EXECUTABLE,
  FORMS,
  formatMs,
  freePort,
  inRounds,
  listeningAfter,
  medianAndSpread,
  NODE,
  progress,
  ratio,
  type Scenario,
  type Summary,
  spawnTimed,
  table,
  toFirstAdminCall,
  wallTime,
  withTarget,
} from './support/harness.js';
import { buildVariants, type Variants } from './support/startup-variants.js';

const RUNS = 30;
const WARM_UP = 3;

/** `shutdown` of our executable (or a variant of it) against the relay. */
function shutdownCommand(executable: string, target: DrainTarget, readyFile: string, before: readonly string[] = []): string[] {
  return [executable, ...before, 'shutdown', '--admin-address', target.adminAddress, '--ready-file', readyFile];
}

/** Exec to the first TCP connect that succeeds on `port` (polled every 1 ms, as the peers bench does); then it is killed. */
async function toListening(command: readonly string[], port: number): Promise<number> {
  const child = spawnTimed(command);
  try {
    return await listeningAfter(child, port);
  } finally {
    child.child.kill('SIGKILL');
    await child.exited;
  }
}

/** Every measure of one round, keyed by row. */
type Round = Record<(typeof MEASURES)[number], number>;
const MEASURES = [
  'baseline',
  'helpExecutable',
  'helpBundle',
  'callExecutable',
  'callBundle',
  'empty',
  'emptySnapshot',
  'httpRequest',
  'noCodeCache',
  'snapshot',
  'listenBare',
  'listenManager',
] as const;

async function round(target: DrainTarget, variants: Variants, dir: string, n: number): Promise<Round> {
  const readyFile = (name: string): string => join(dir, `ready-${name}-${n}`);
  const { paths } = variants;
  const port = await freePort();
  return {
    baseline: await wallTime([NODE, '-e', '0']),
    helpExecutable: await wallTime([...FORMS.executable.command, 'shutdown', '--help']),
    helpBundle: await wallTime([...FORMS.bundle.command, 'shutdown', '--help']),
    callExecutable: await toFirstAdminCall(
      [...FORMS.executable.command, 'shutdown', '--admin-address', target.adminAddress, '--ready-file', readyFile('executable')],
      target,
    ),
    callBundle: await toFirstAdminCall(
      [...FORMS.bundle.command, 'shutdown', '--admin-address', target.adminAddress, '--ready-file', readyFile('bundle')],
      target,
    ),
    empty: await wallTime([paths.empty]),
    emptySnapshot: await wallTime([paths.emptySnapshot]),
    httpRequest: await toFirstAdminCall([paths.httpRequest, target.adminAddress], target),
    noCodeCache: await toFirstAdminCall(shutdownCommand(paths.noCodeCache, target, readyFile('no-code-cache')), target),
    snapshot: await toFirstAdminCall(shutdownCommand(paths.snapshot, target, readyFile('snapshot')), target),
    listenBare: await toListening([paths.httpListen, String(port)], port),
    listenManager: await toListening([EXECUTABLE, 'shutdown-manager', '--port', String(port), '--ready-file', readyFile('manager')], port),
  };
}

async function run(): Promise<string> {
  progress('startup', 'building the probe and variant executables');
  const variants = await buildVariants();
  const snapshotExtraMiB = (statSync(variants.paths.snapshot).size - statSync(EXECUTABLE).size) / 2 ** 20;
  let s: Record<(typeof MEASURES)[number], Summary>;
  try {
    s = await withTarget('startup', (target, dir) => inRounds({ runs: RUNS, warmUp: WARM_UP }, (n) => round(target, variants, dir, n)));
    progress('startup', `${RUNS} runs of each`);
  } finally {
    variants.remove();
  }
  const cell = (summary: Summary): string => medianAndSpread(summary, formatMs);
  const toBaseline = (summary: Summary): string => ratio(summary.median, s.baseline.median);
  const rows = [
    ['`shutdown --help`: exec → exit', cell(s.helpExecutable), cell(s.helpBundle), cell(s.baseline)],
    ['… as a ratio to `node -e 0`', toBaseline(s.helpExecutable), toBaseline(s.helpBundle), '1.00×'],
    ['`shutdown`: exec → first admin request received by the relay in front of Envoy', cell(s.callExecutable), cell(s.callBundle), '—'],
    ['… as a ratio to `node -e 0`', toBaseline(s.callExecutable), toBaseline(s.callBundle), '—'],
  ];
  const where = [
    ['`node -e 0` (the baseline)', 'exec → exit', cell(s.baseline), '1.00×'],
    ['single executable of an empty script', 'exec → exit', cell(s.empty), toBaseline(s.empty)],
    ['… with a startup snapshot (of nothing)', 'exec → exit', cell(s.emptySnapshot), toBaseline(s.emptySnapshot)],
    ['single executable that loads `node:http` and sends `POST /healthcheck/fail`', 'exec → request received', cell(s.httpRequest), toBaseline(s.httpRequest)],
    ['**ours**, `shutdown` as a hook runs it (code cache)', 'exec → first admin request received', cell(s.callExecutable), toBaseline(s.callExecutable)],
    ['ours, built without a code cache', 'exec → first admin request received', cell(s.noCodeCache), toBaseline(s.noCodeCache)],
    [
      'ours, built with a startup snapshot (CLI modules initialized in it; no code cache)',
      'exec → first admin request received',
      cell(s.snapshot),
      toBaseline(s.snapshot),
    ],
  ];
  const listening = [
    ['single executable of a bare `http.createServer().listen(port)`', cell(s.listenBare), '1.00×', toBaseline(s.listenBare)],
    [
      '**ours**, `shutdown-manager --port … --ready-file …`',
      cell(s.listenManager),
      ratio(s.listenManager.median, s.listenBare.median),
      toBaseline(s.listenManager),
    ],
  ];
  const ms = (value: number): string => formatMs(value);
  return [
    `Each process is spawned from the bench process and timed on its clock: from just before the exec to the child's exit (\`--help\`), or to the moment the first admin request reaches an in-process relay in front of a real Envoy ${await envoyVersion()} (\`POST /healthcheck/fail\`; the process is then killed). The baseline is \`node -e 0\` on the same Node 24 binary. Environment: only \`PATH\`, as in the image. ${RUNS} interleaved runs of each measure below after ${WARM_UP} discarded; median (p10–p90).`,
    '',
    table(['measure', FORMS.executable.label, FORMS.bundle.label, '`node -e 0` (baseline)'], rows),
    '',
    '**Where the start-up goes.** Probe executables built by the same packaging code as ours (stripped Node 24, the same flags baked in, code cache on unless said), measured in the same interleaved runs:',
    '',
    table(['program', 'measure', 'median (p10–p90)', 'ratio to `node -e 0`'], where),
    '',
    '**The manager listening**, exec → the first TCP connect that succeeds (polled every 1 ms), same runs:',
    '',
    table(['program', 'median (p10–p90)', 'ratio to the bare server', 'ratio to `node -e 0`'], listening),
    '',
    `Reading the table: a single executable starts ${ms(s.baseline.median - s.empty.median)} sooner than \`node -e 0\` (no \`-e\` evaluation, a stripped binary); loading \`node:http\` (with \`node:net\` and streams) and sending one request adds ${ms(s.httpRequest.median - s.empty.median)}: that program, ${ratio(s.httpRequest.median, s.baseline.median)} of \`node -e 0\`, is the floor for any Node program that talks to Envoy. Ours adds ${ms(s.callExecutable.median - s.httpRequest.median)} on top (its module init, the option parse, the ready-file directory check, the drain-state file, the first log line). Dropping the code cache would add ${ms(s.noCodeCache.median - s.callExecutable.median)}. A startup snapshot replaces Node's own built-in one: by itself it costs ${ms(s.emptySnapshot.median - s.empty.median)} (an empty script with and without one), which eats most of what holding our CLI modules initialized saves (ours with one: ${ms(s.snapshot.median - s.callExecutable.median)} against ours as shipped, inside the spread of both); \`node:http\` cannot be in it (Node aborts the build: its parser binding does not serialize), and it makes the executable ${snapshotExtraMiB.toFixed(1)} MiB larger. No clear win: the executable ships with the code cache and no snapshot.`,
    '',
    'Every command line is parsed by commander, from the option tables: a parser of our own for the plain hook and sidecar lines saved about 5 ms here, unnoticeable in a hook that waits at least the minimum drain, and was dropped. Each command loads its own modules when it runs, the drop-in peers only under their names; the hand-off files avoid `node:crypto` and `node:fs/promises`, the manager loads `node:crypto` only for a hook token.',
  ].join('\n');
}

export const startup: Scenario = { name: 'startup', title: '4. Start-up', run };
