// 4. Start-up: `shutdown --help` wall time, and the time from exec to the first admin request the
// real Envoy (through a timing relay) receives, for the single executable and for `node dist/…cjs`, as ratios to
// `node -e 0` on the same Node binary, measured in the same run.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { envoyVersion } from '../test/support/real-envoy/binary.js';
import { DrainTarget } from './support/drain-target.js';
import { FORMS, type Form, NODE, spawnTimed } from './support/processes.js';
import { type Scenario, progress } from './support/scenario.js';
import { type Summary, formatMs, medianAndSpread, ratio, summarize, table } from './support/stats.js';

const RUNS = 30;
const WARM_UP = 3;
const PRODUCT: readonly Form[] = ['executable', 'bundle'];

/** Wall time of one process, exec to exit, on this process's clock. */
async function wallTime(command: readonly string[]): Promise<number> {
  const child = spawnTimed(command);
  const exit = await child.exited;
  if (exit.code !== 0) throw new Error(`${command.join(' ')} exited ${exit.code ?? exit.signal}: ${exit.stderr}`);
  return exit.at - child.startedAt;
}

/** Exec of `shutdown` to the moment Envoy's admin relay receives its first admin call; then it is killed. */
async function toFirstAdminCall(form: Form, target: DrainTarget, readyFile: string): Promise<number> {
  const firstCall = target.nextCall('/healthcheck/fail');
  const child = spawnTimed([...FORMS[form].command, 'shutdown', '--admin-address', target.adminAddress, '--ready-file', readyFile]);
  const call = await Promise.race([firstCall, child.exited.then((exit) => Promise.reject(new Error(`shutdown exited first (${exit.code}): ${exit.stderr}`)))]);
  child.child.kill('SIGKILL');
  await child.exited;
  return call.receivedAt - child.startedAt;
}

async function run(): Promise<string> {
  const help: Record<Form | 'baseline', number[]> = { executable: [], bundle: [], baseline: [] };
  const firstCall: Record<Form, number[]> = { executable: [], bundle: [] };
  const dir = mkdtempSync(join(tmpdir(), 'bench-startup-'));
  const target = await DrainTarget.start();
  try {
    // Interleaved, the first few of each discarded (page cache, CPU frequency).
    for (let n = -WARM_UP; n < RUNS; n += 1) {
      const baseline = await wallTime([NODE, '-e', '0']);
      const times = { executable: await wallTime([...FORMS.executable.command, 'shutdown', '--help']), bundle: await wallTime([...FORMS.bundle.command, 'shutdown', '--help']) };
      const calls = { executable: 0, bundle: 0 };
      for (const form of PRODUCT) calls[form] = await toFirstAdminCall(form, target, join(dir, `ready-${form}-${n + WARM_UP}`));
      if (n < 0) continue;
      help.baseline.push(baseline);
      for (const form of PRODUCT) {
        help[form].push(times[form]);
        firstCall[form].push(calls[form]);
      }
    }
    progress('startup', `${RUNS} runs of each`);
  } finally {
    await target.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  const baseline = summarize(help.baseline);
  const cell = (summary: Summary): string => medianAndSpread(summary, formatMs);
  const rows = [
    ['`shutdown --help`: exec → exit', ...PRODUCT.map((form) => cell(summarize(help[form]))), cell(baseline)],
    ['… as a ratio to `node -e 0`', ...PRODUCT.map((form) => ratio(summarize(help[form]).median, baseline.median)), '1.00×'],
    ['`shutdown`: exec → first admin request received by the relay in front of Envoy', ...PRODUCT.map((form) => cell(summarize(firstCall[form]))), '—'],
    ['… as a ratio to `node -e 0`', ...PRODUCT.map((form) => ratio(summarize(firstCall[form]).median, baseline.median)), '—'],
  ];
  return [
    `Each process is spawned from the bench process and timed on its clock: from just before the exec to the child's exit (\`--help\`), or to the moment the first admin request reaches an in-process relay in front of a real Envoy ${await envoyVersion()} (\`POST /healthcheck/fail\`; the process is then killed). The baseline is \`node -e 0\` on the same Node 24 binary. Environment: only \`PATH\`, as in the image. ${RUNS} interleaved runs of each after ${WARM_UP} discarded; median (p10–p90).`,
    '',
    table(['measure', FORMS.executable.label, FORMS.bundle.label, '`node -e 0` (baseline)'], rows),
    '',
    'The executable carries a V8 code cache of the bundle, built by `npm run package`, so its start skips compiling the bundle. The first admin request comes after parsing the options, checking the ready-file directory and writing the drain-state file; the admin client is the `node:http` built into Node (no HTTP library to load).',
  ].join('\n');
}

export const startup: Scenario = { name: 'startup', title: '4. Start-up', run };
