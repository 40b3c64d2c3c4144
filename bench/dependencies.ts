// 13. Dependencies: what undici and pino would cost the product, measured in the form it ships:
// each probe bundled by esbuild with the product's options and packaged as a single executable
// with a code cache by the product's own packaging code. Start-up to the first admin call or log
// line, and private memory once idle, against our node:http client and our logger.
import { statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import {
  type DrainTarget,
  formatMiB,
  formatMs,
  inRounds,
  medianAndSpread,
  memoryAfter,
  progress,
  ratio,
  type Scenario,
  spawnTimed,
  type TimedChild,
  table,
  toFirstAdminCall,
  withTarget,
} from './support/harness.js';

const PROBES = {
  bare: { label: 'nothing loaded: one `writeSync` to stdout (the floor)', kind: 'log' },
  logOurs: { label: '**our logger** (`src/shared/log.ts`): one line', kind: 'log' },
  logPino: { label: '`pino` 10: the same line', kind: 'log' },
  adminOurs: { label: '**our admin client** (`node:http`): `POST /healthcheck/fail`', kind: 'admin' },
  adminUndici: { label: '`undici` 8 `request`: the same call', kind: 'admin' },
} as const;
type Probe = keyof typeof PROBES;
const NAMES = Object.keys(PROBES) as Probe[];
const FILES: Readonly<Record<Probe, string>> = { bare: 'bare', logOurs: 'log-ours', logPino: 'log-pino', adminOurs: 'admin-ours', adminUndici: 'admin-undici' };

const RUNS = 20;
const WARM_UP = 2;
const MEMORY_RUNS = 5;
/** How long a probe idles after its work before its memory is read, as the idle-memory bench lets the manager settle. */
const SETTLE_MS = 3_000;

interface Built {
  readonly executable: string;
  readonly bundleBytes: number;
}

/** Each probe bundled as scripts/build.mjs bundles the CLI, then packaged as scripts/package.mjs packages it. */
async function buildProbes(dir: string): Promise<Record<Probe, Built>> {
  const packaging = (await import(pathToFileURL(resolve('scripts/package.mjs')).href)) as {
    buildSingleExecutable(options: { main: string; output: string; work: string }): void;
  };
  const built: Partial<Record<Probe, Built>> = {};
  for (const name of NAMES) {
    const main = join(dir, `${name}.cjs`);
    await build({
      entryPoints: [`bench/support/probes/${FILES[name]}.ts`],
      outfile: main,
      bundle: true,
      platform: 'node',
      format: 'cjs',
      target: 'node20',
      minifySyntax: true,
      minifyWhitespace: true,
      legalComments: 'linked',
      logLevel: 'error',
    });
    const executable = join(dir, name);
    packaging.buildSingleExecutable({ main, output: executable, work: join(dir, `work-${name}`) });
    built[name] = { executable, bundleBytes: statSync(main).size };
  }
  return built as Record<Probe, Built>;
}

/** Resolves once the child has written its first byte to stdout. */
function firstOutput(child: TimedChild): Promise<number> {
  return new Promise((resolvePromise, reject) => {
    child.child.stdout?.once('data', () => resolvePromise(performance.now()));
    void child.exited.then((exit) => reject(new Error(`probe exited first (${exit.code ?? exit.signal}): ${exit.stderr}`)));
  });
}

/** Exec to the probe's work: its first admin call reaching the relay, or its first line on stdout. */
async function startUp(name: Probe, built: Built, target: DrainTarget): Promise<number> {
  if (PROBES[name].kind === 'admin') return toFirstAdminCall([built.executable, target.adminAddress], target);
  const child = spawnTimed([built.executable], { stdout: 'pipe' });
  try {
    return (await firstOutput(child)) - child.startedAt;
  } finally {
    child.child.kill('SIGKILL');
    await child.exited;
  }
}

/** RssAnon in KiB once the probe has done its work and idled for SETTLE_MS. */
async function idleAnon(name: Probe, built: Built, target: DrainTarget): Promise<number> {
  const admin = PROBES[name].kind === 'admin';
  const call = admin ? target.nextCall('/healthcheck/fail') : undefined;
  const child = spawnTimed(admin ? [built.executable, target.adminAddress] : [built.executable], { stdout: 'pipe' });
  try {
    await (call ?? firstOutput(child));
    return (await memoryAfter(child.pid, SETTLE_MS)).anonKiB;
  } finally {
    child.child.kill('SIGKILL');
    await child.exited;
  }
}

/** A memory difference with its sign; under 0.05 MiB, none. */
function difference(kib: number): string {
  return Math.abs(kib) < 0.05 * 1024 ? '±0' : `${kib > 0 ? '+' : '−'}${formatMiB(Math.abs(kib))}`;
}

async function run(): Promise<string> {
  const { built, time, anon } = await withTarget('dependencies', async (target, dir) => {
    progress('dependencies', 'bundling and packaging the probes');
    const probes = await buildProbes(dir);
    const each = async (measure: (name: Probe, probe: Built, target: DrainTarget) => Promise<number>): Promise<Record<Probe, number>> => {
      const figures: Partial<Record<Probe, number>> = {};
      for (const name of NAMES) figures[name] = await measure(name, probes[name], target);
      return figures as Record<Probe, number>;
    };
    const startUps = await inRounds({ runs: RUNS, warmUp: WARM_UP }, () => each(startUp));
    progress('dependencies', `${RUNS} start-ups of each; memory next`);
    const memory = await inRounds({ runs: MEMORY_RUNS, warmUp: 0 }, () => each(idleAnon));
    return { built: probes, time: startUps, anon: memory };
  });
  const ours = (name: Probe): Probe => (PROBES[name].kind === 'admin' ? 'adminOurs' : 'logOurs');
  const rows = NAMES.map((name) => [
    PROBES[name].label,
    `${(built[name].bundleBytes / 1024).toFixed(0)} KiB`,
    medianAndSpread(time[name], formatMs),
    ratio(time[name].median, time[ours(name)].median),
    medianAndSpread(anon[name], formatMiB, 'min-max'),
    difference(anon[name].median - anon[ours(name)].median),
  ]);
  const extra = (library: Probe, mine: Probe): string =>
    `${formatMs(time[library].median - time[mine].median)} and ${formatMiB(anon[library].median - anon[mine].median)}`;
  return [
    `Each probe is a few lines (\`bench/support/probes/\`), bundled with the product's esbuild options and packaged by \`scripts/package.mjs\` exactly as the executable is (stripped Node 24, the same baked flags, a code cache). Start-up: exec → the first admin request reaching the relay in front of a real Envoy (admin probes) or the first byte on stdout (log probes); ${RUNS} interleaved runs of each after ${WARM_UP} discarded, median (p10–p90). Memory: RssAnon (private) ${SETTLE_MS / 1000} s after that, idle, ${MEMORY_RUNS} runs, median (min–max). Differences are against ours, from the medians.`,
    '',
    table(['probe', 'bundle', 'exec → work done', 'vs ours', 'RssAnon idle', 'vs ours'], rows),
    '',
    `Over what the product uses today, undici would add ${extra('adminUndici', 'adminOurs')} of private memory to every hook and manager; pino ${extra('logPino', 'logOurs')}. Both libraries are pinned devDependencies only, for this bench and for the test that reads our logs with \`pino-pretty\`.`,
  ].join('\n');
}

export const dependencies: Scenario = { name: 'dependencies', title: '13. Dependencies: undici and pino as shipped', run };
