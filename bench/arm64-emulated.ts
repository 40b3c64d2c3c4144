// arm64 under emulation: the arm64 single executable run by qemu-aarch64-static on this x86-64
// machine, with Debian's arm64 loader and libraries (-L). What it loses without a code cache (the
// shipped one carries none: scripts/package.mjs says why), measured against a variant whose code
// cache the arm64 Node made under the same emulation; how long the manager takes to listen; and its
// idle memory. Every figure is EMULATED: qemu translates each arm64 instruction, so times are many
// times a real arm64 machine's, and the resident memory includes qemu's own translation cache.
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  BUNDLE,
  formatMiB,
  formatMs,
  freePort,
  inRounds,
  listeningAfter,
  medianAndSpread,
  memoryAfter,
  progress,
  ratio,
  type Scenario,
  type Summary,
  spawnTimed,
  stopChild,
  table,
  toFirstAdminCall,
  wallTime,
  withTarget,
} from './support/harness.js';

const RUNS = 8;
const WARM_UP = 1;
/** How long the manager sits idle before its resident memory is read. */
const IDLE_MS = 5_000;
const QEMU = '/usr/bin/qemu-aarch64-static';

interface PackageScript {
  readonly ARM64_EXECUTABLE: string;
  readonly TARGETS: { readonly arm64: { readonly node: string } };
  buildSingleExecutable(options: { main: string; output: string; work: string; arch: string; codeCache: boolean; blobNode: string[] }): void;
}

/**
 * CPU time (user + system) of one run of `command` to its exit, from bash's `times` (10 ms steps):
 * unlike wall time, barely moved by other processes on a busy machine.
 */
async function cpuTime(command: readonly string[]): Promise<number> {
  const child = spawnTimed(['/bin/bash', '-c', '"$@" >/dev/null 2>&1 || exit 99; times', 'bash', ...command], { stdout: 'pipe' });
  let out = '';
  child.child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  const exit = await child.exited;
  const children = out
    .trim()
    .split('\n')[1]
    ?.match(/(\d+)m([\d.]+)s (\d+)m([\d.]+)s/);
  if (exit.code !== 0 || children == null) throw new Error(`${command.join(' ')} failed (${exit.code}): ${out}${exit.stderr}`);
  return (Number(children[1]) * 60 + Number(children[2]) + Number(children[3]) * 60 + Number(children[4])) * 1000;
}

/** Exec → first successful connect (polled every 5 ms), then the resident memory after IDLE_MS idle. */
async function listenAndIdle(command: readonly string[], port: number): Promise<{ listenMs: number; rssKiB: number }> {
  const child = spawnTimed(command);
  try {
    const listenMs = await listeningAfter(child, port, { pollMs: 5, timeoutMs: 60_000 });
    return { listenMs, rssKiB: (await memoryAfter(child.pid, IDLE_MS)).rssKiB };
  } finally {
    await stopChild(child);
  }
}

async function run(): Promise<string> {
  const script = (await import(pathToFileURL(resolve('scripts/package.mjs')).href)) as PackageScript;
  const debian = (await import(pathToFileURL(resolve('scripts/debian.mjs')).href)) as { ensureArm64Sysroot(): string };
  const sysroot = debian.ensureArm64Sysroot();
  const emulated = (executable: string): string[] => [QEMU, '-L', sysroot, executable];
  return withTarget('arm64', async (target, dir) => {
    progress('arm64-emulated', 'building an arm64 variant whose code cache the arm64 Node makes under emulation');
    const cached = join(dir, 'with-code-cache');
    script.buildSingleExecutable({
      main: BUNDLE,
      output: cached,
      work: join(dir, 'work'),
      arch: 'arm64',
      codeCache: true,
      blobNode: emulated(resolve(script.TARGETS.arm64.node)),
    });
    const shipped = resolve(script.ARM64_EXECUTABLE);
    const s = await inRounds({ runs: RUNS, warmUp: WARM_UP, scenario: 'arm64-emulated' }, async (n) => {
      const timed = {
        versionShipped: await wallTime([...emulated(shipped), '--version']),
        versionCached: await wallTime([...emulated(cached), '--version']),
        cpuVersionShipped: await cpuTime([...emulated(shipped), '--version']),
        cpuVersionCached: await cpuTime([...emulated(cached), '--version']),
        cpuHelpShipped: await cpuTime([...emulated(shipped), 'shutdown', '--help']),
        cpuHelpCached: await cpuTime([...emulated(cached), 'shutdown', '--help']),
        callShipped: await toFirstAdminCall(
          [...emulated(shipped), 'shutdown', '--admin-timeout', '30s', '--admin-address', target.adminAddress, '--ready-file', join(dir, `ready-s-${n}`)],
          target,
        ),
        callCached: await toFirstAdminCall(
          [...emulated(cached), 'shutdown', '--admin-timeout', '30s', '--admin-address', target.adminAddress, '--ready-file', join(dir, `ready-c-${n}`)],
          target,
        ),
      };
      const port = await freePort();
      const idle = await listenAndIdle(
        [...emulated(shipped), 'shutdown-manager', '--host', '127.0.0.1', '--port', String(port), '--ready-file', join(dir, `ready-m-${n}`)],
        port,
      );
      return { ...timed, listen: idle.listenMs, rss: idle.rssKiB };
    });
    const ms = (summary: Summary): string => medianAndSpread(summary, formatMs);
    const load = loadavg()[0]?.toFixed(1) ?? '?';
    return [
      `**Emulated, not a real arm64 machine.** The arm64 executable (\`${script.ARM64_EXECUTABLE}\`) run by Debian's qemu-aarch64-static 7.2 on this x86-64 machine with Debian's arm64 libc6, libgcc-s1 and libstdc++6 (\`-L\`), timed from the bench process as in section 4. ${RUNS} interleaved runs of each after ${WARM_UP} discarded; median (p10–p90). qemu translates every arm64 instruction before it runs: absolute times say nothing about a real arm64 node, only the ratios between rows do, and only roughly (compiling JavaScript is emulated too, so a missing code cache weighs more here than on real hardware). Load average at the end of the run: ${load} on this machine's cores.`,
      '',
      table(
        ['measure', 'shipped (no code cache)', 'with a code cache made under emulation', 'shipped / cached'],
        [
          ['`--version`: exec → exit', ms(s.versionShipped), ms(s.versionCached), ratio(s.versionShipped.median, s.versionCached.median)],
          [
            '`--version`: CPU time (user + system)',
            ms(s.cpuVersionShipped),
            ms(s.cpuVersionCached),
            ratio(s.cpuVersionShipped.median, s.cpuVersionCached.median),
          ],
          [
            '`shutdown --help` (through commander): CPU time',
            ms(s.cpuHelpShipped),
            ms(s.cpuHelpCached),
            ratio(s.cpuHelpShipped.median, s.cpuHelpCached.median),
          ],
          ['`shutdown`: exec → first admin request received', ms(s.callShipped), ms(s.callCached), ratio(s.callShipped.median, s.callCached.median)],
        ],
      ),
      '',
      `What the arm64 executable loses without a code cache, emulated: ${formatMs(s.cpuVersionShipped.median - s.cpuVersionCached.median)} of CPU time for \`--version\`, ${formatMs(s.cpuHelpShipped.median - s.cpuHelpCached.median)} for \`shutdown --help\`; ${formatMs(s.callShipped.median - s.callCached.median)} of wall time from exec to the first admin request. Wall times on a shared machine move with its load (the p10–p90 spreads): the CPU times are the figure to read. Natively on x86-64 the cache saves about 2 ms (section 4). It ships without one because a cache for arm64 could only be made by running the arm64 Node under emulation, and nothing here can show that a real arm64 CPU accepts it (V8 would then silently compile instead).`,
      '',
      table(
        ['the manager, shipped arm64 executable, emulated', 'median (p10–p90)'],
        [
          ['`shutdown-manager`: exec → first TCP connect that succeeds', ms(s.listen)],
          [`resident memory (VmRSS of the qemu process) after ${IDLE_MS / 1000} s idle`, medianAndSpread(s.rss, formatMiB)],
        ],
      ),
      '',
      "The resident memory is qemu's process: the emulated program's pages plus qemu's translated-code cache and its own state, so it overstates what the manager holds on a real arm64 node (section 2 has the x86-64 figures).",
    ].join('\n');
  });
}

export const arm64Emulated: Scenario = { name: 'arm64-emulated', title: '11. arm64 under emulation', run };
