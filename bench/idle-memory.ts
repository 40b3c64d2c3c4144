// 2. Idle memory: `shutdown-manager` as the single executable and on Node, after 10 s idle, as a
// ratio to a bare Node process measured in the same run; and what candidate memory flags change.
import { closeSync, openSync, readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import {
  cleanEnv,
  FORMS,
  formatMiB,
  type Memory,
  medianAndSpread,
  NODE,
  progress,
  ratio,
  readMemory,
  type Scenario,
  sleep,
  spawnTimed,
  stopChild,
  summarize,
  type TimedChild,
  table,
  withScratch,
} from './support/harness.js';
import { type RunningManager, startManager } from './support/manager.js';

const IDLE_MS = 10_000;
const ROUNDS = 3;
const REJECTED_CODE_CACHE = 'Code cache data rejected';

interface Variant {
  readonly name: string;
  /** The binary and what precedes the subcommand; undefined: the bare Node baseline. */
  readonly command: readonly string[] | undefined;
  readonly flags: string;
  /** NODE_OPTIONS works for both forms; some V8 flags are refused there and go on Node's command line (or into SEA_EXEC_ARGV). */
  readonly via: 'NODE_OPTIONS' | 'command line' | '';
  /** The variant without flags this one is compared with. */
  readonly reference?: string;
}

const EXE = 'single executable';
const BUNDLED = 'node dist/…cjs';

function variants(freshCopy: string): Variant[] {
  return [
    { name: 'bare Node (baseline)', command: undefined, flags: '', via: '' },
    { name: EXE, command: FORMS.executable.command, flags: '', via: '' },
    { name: `${EXE}, copied with 4 KiB writes`, command: [freshCopy], flags: '', via: '' },
    { name: BUNDLED, command: FORMS.bundle.command, flags: '', via: '' },
    ...['--max-old-space-size=16', '--max-semi-space-size=1', '--max-old-space-size=16 --max-semi-space-size=1', '--jitless', '--v8-pool-size=1'].map(
      (flags): Variant => ({ name: EXE, command: FORMS.executable.command, flags, via: 'NODE_OPTIONS', reference: EXE }),
    ),
    // Refused in NODE_OPTIONS ("is not allowed"): measured on Node's command line, as SEA_EXEC_ARGV would bake them in.
    ...['--lite-mode', '--optimize-for-size'].map((flags): Variant => {
      const [node, bundle] = FORMS.bundle.command as [string, string];
      return { name: BUNDLED, command: [node, ...flags.split(' '), bundle], flags, via: 'command line', reference: BUNDLED };
    }),
  ];
}

interface Running {
  readonly process: TimedChild;
  readonly stop: () => Promise<unknown>;
}

async function start(variant: Variant): Promise<Running> {
  if (variant.command === undefined) {
    const bare = spawnTimed([NODE, '-e', 'setTimeout(()=>{},1e6)']);
    return { process: bare, stop: () => stopChild(bare) };
  }
  const env = cleanEnv(variant.via === 'NODE_OPTIONS' ? { NODE_OPTIONS: variant.flags } : {});
  const manager: RunningManager = await startManager(variant.command, [], { env });
  return { process: manager.process, stop: () => manager.stop() };
}

/**
 * The executable as `npm run package` left it shows more RssFile than the same bytes written in
 * 4 KiB pieces: the page cache keeps large folios from strip's and postject's big writes, and a
 * fault maps a whole folio. A copy written in small pieces shows what a cold page cache gives.
 */
function copyInSmallWrites(dir: string): string {
  const copy = join(dir, 'envoy-shutdown-manager');
  const bytes = readFileSync(FORMS.executable.command[0] as string);
  const fd = openSync(copy, 'w', 0o755);
  try {
    for (let offset = 0; offset < bytes.length; offset += 4096) writeSync(fd, bytes, offset, Math.min(4096, bytes.length - offset));
  } finally {
    closeSync(fd);
  }
  return copy;
}

/** One round: every variant at once (memory is per process; start-up contention does not change it), read after 10 s idle. */
async function round(all: readonly Variant[]): Promise<Array<{ memory: Memory; stderr: string }>> {
  const running = await Promise.all(all.map(start));
  let memories: Memory[] = [];
  try {
    await sleep(IDLE_MS);
    memories = running.map((r) => readMemory(r.process.pid));
  } finally {
    await Promise.all(running.map((r) => r.stop()));
  }
  const exits = await Promise.all(running.map((r) => r.process.exited));
  return memories.map((memory, index) => ({ memory, stderr: exits[index]?.stderr ?? '' }));
}

async function run(): Promise<string> {
  return withScratch('memory', async (dir) => {
    const all = variants(copyInSmallWrites(dir));
    const memories: Memory[][] = all.map(() => []);
    const rejected = new Set<number>();
    for (let n = 0; n < ROUNDS; n += 1) {
      progress('idle-memory', `round ${n + 1} of ${ROUNDS}: ${all.length} processes, ${IDLE_MS / 1000} s idle`);
      (await round(all)).forEach(({ memory, stderr }, index) => {
        memories[index]?.push(memory);
        if (stderr.includes(REJECTED_CODE_CACHE)) rejected.add(index);
      });
    }
    return report(all, memories, rejected);
  });
}

function report(all: readonly Variant[], memories: Memory[][], rejected: ReadonlySet<number>): string {
  const of = (index: number, key: keyof Memory): ReturnType<typeof summarize> => summarize((memories[index] ?? []).map((m) => m[key]));
  const bareRss = of(0, 'rssKiB').median;
  const bareAnon = of(0, 'anonKiB').median;
  const rows = all.map((variant, index) => [
    variant.name,
    variant.flags === '' ? '—' : `\`${variant.flags}\` (${variant.via})`,
    medianAndSpread(of(index, 'rssKiB'), formatMiB, 'min-max'),
    medianAndSpread(of(index, 'anonKiB'), formatMiB, 'min-max'),
    formatMiB(of(index, 'fileKiB').median),
    ratio(of(index, 'rssKiB').median, bareRss),
    ratio(of(index, 'anonKiB').median, bareAnon),
  ]);
  const effects = all.flatMap((variant, index) => {
    if (variant.reference === undefined) return [];
    const reference = all.findIndex((v) => v.name === variant.reference && v.flags === '');
    const anonDelta = of(index, 'anonKiB').median - of(reference, 'anonKiB').median;
    const rssDelta = of(index, 'rssKiB').median - of(reference, 'rssKiB').median;
    const spread = Math.max(of(reference, 'anonKiB').max - of(reference, 'anonKiB').min, of(index, 'anonKiB').max - of(index, 'anonKiB').min);
    const verdict = rejected.has(index)
      ? `rejects the executable's code cache (slower start, a warning on stderr)${anonDelta < 0 ? `; ${formatMiB(-anonDelta)} less anonymous memory` : ''}`
      : anonDelta <= -Math.max(1024, spread)
        ? 'saves memory'
        : anonDelta >= Math.max(1024, spread)
          ? 'costs memory'
          : 'no effect beyond the spread';
    return [[`\`${variant.flags}\``, `${variant.name}, ${variant.via}`, signed(anonDelta), signed(rssDelta), verdict]];
  });
  return [
    `Each variant runs \`shutdown-manager --port 0\` with a ready file in a fresh directory and its log going to a file; the baseline is \`${NODE.replace(`${process.cwd()}/`, '')} -e "setTimeout(()=>{},1e6)"\` (the same Node 24 binary the executable is built from). All ${all.length} processes of a round start together and are read ${IDLE_MS / 1000} s after the last one is listening, from \`/proc/<pid>/status\` (VmRSS, RssAnon, RssFile); ${ROUNDS} rounds, median (min–max).`,
    '',
    table(['process', 'flags', 'RSS', 'RssAnon', 'RssFile', 'RSS vs bare Node', 'RssAnon vs bare Node'], rows),
    '',
    'What each flag changes, against the same form without flags (medians; "no effect" when the change is under 1 MiB or under the spread of the runs):',
    '',
    table(['flags', 'measured on', 'RssAnon change', 'RSS change', 'verdict'], effects),
    '',
    'Flags that Node refuses in NODE_OPTIONS (`--lite-mode`, `--optimize-for-size`) reach the executable only when baked in with `SEA_EXEC_ARGV="…" npm run package`; see bench/README.md for what that costs (the code cache).',
    '',
    "RssAnon is what the process really adds: heaps, stacks, malloc arenas. RssFile is the executable's own pages, shared through the page cache by every container running the same image, and reclaimable. It depends on how the page cache holds the file, not only on the binary: `dist/envoy-shutdown-manager` as `npm run package` wrote it maps more than the same bytes written in 4 KiB pieces, because the big writes of `strip` and postject leave large folios in the page cache and a page fault maps the whole folio (a stripped `node` shows the same). Compare RssAnon across forms; read RssFile as an upper bound.",
  ].join('\n');
}

function signed(kib: number): string {
  return `${kib > 0 ? '+' : kib < 0 ? '−' : '±'}${formatMiB(Math.abs(kib))}`;
}

export const idleMemory: Scenario = { name: 'idle-memory', title: '2. Idle memory', run };
