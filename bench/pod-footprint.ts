// 7. What each pod mode costs beside Envoy: the process that stays running, the disk
// the sidecar-less copy takes, the start-up work per pod, and the hook process while it drains.
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startChartEnvoy } from '../test/support/real-envoy/chart-envoy.js';
import {
  cleanEnv,
  EXECUTABLE,
  FORMS,
  formatMiB,
  formatMs,
  type Memory,
  medianAndSpread,
  memoryAfter,
  progress,
  type Scenario,
  spawnTimed,
  summarize,
  table,
} from './support/harness.js';
import { startManager } from './support/manager.js';

const ROUNDS = 3;
const IDLE_MS = 10_000;
const TOKEN = 'bench-hook-token-0123456789abcdef';

interface SidecarSample {
  readonly startMs: number;
  readonly idle: Memory;
}

/** The manager from exec to answering /healthz, then its memory after IDLE_MS. */
async function sidecar(args: readonly string[], env: Record<string, string>): Promise<SidecarSample> {
  const manager = await startManager(FORMS.executable.command, args, { env: cleanEnv(env) });
  const startMs = performance.now() - manager.process.startedAt;
  const idle = await memoryAfter(manager.process.pid, IDLE_MS);
  await manager.stop();
  return { startMs, idle };
}

export function directoryBytes(path: string): number {
  let total = 0;
  for (const entry of readdirSync(path, { withFileTypes: true })) {
    const full = join(path, entry.name);
    if (entry.isDirectory()) total += directoryBytes(full);
    else if (entry.isFile()) total += statSync(full).size;
  }
  return total;
}

/** `install` into a fresh directory: wall time and bytes; returns the installed hook command. */
export async function install(): Promise<{ ms: number; bytes: number; dir: string; command: string[] }> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-install-'));
  const child = spawnTimed([EXECUTABLE, 'install', dir], { stdout: 'pipe' });
  let output = '';
  child.child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const exit = await child.exited;
  if (exit.code !== 0) throw new Error(`install failed: ${exit.stderr}`);
  const command = (JSON.parse(output.trim().split('\n').at(-1) ?? '[]') as string[]).slice(0, -1);
  return { ms: exit.at - child.startedAt, bytes: directoryBytes(dir), dir, command };
}

/** The drain hook's own memory halfway through a 3 s minimum drain: what it adds while the pod terminates. */
async function hookDuringDrain(command: readonly string[]): Promise<Memory> {
  const envoy = await startChartEnvoy();
  try {
    const hook = spawnTimed([
      ...command,
      'shutdown',
      '--no-ready-file',
      '--admin-address',
      envoy.adminAddress,
      '--connections',
      'listeners',
      '--min-drain-duration',
      '3s',
    ]);
    const memory = await memoryAfter(hook.pid, 1_500);
    const exit = await hook.exited;
    if (exit.code !== 0) throw new Error(`the hook exited ${exit.code}: ${exit.stderr}`);
    return memory;
  } finally {
    await envoy.stop();
  }
}

export const podFootprint: Scenario = {
  name: 'pod-footprint',
  title: '7. Per-pod footprint of each mode',
  async run() {
    const classic: SidecarSample[] = [];
    const native: SidecarSample[] = [];
    const installs: Array<{ ms: number; bytes: number }> = [];
    const hooks: Memory[] = [];
    for (let round = 1; round <= ROUNDS; round += 1) {
      progress('pod-footprint', `round ${round} of ${ROUNDS}`);
      // Both sidecar forms idle side by side, so they see the same machine.
      const [c, n] = await Promise.all([sidecar([], {}), sidecar(['--drain-endpoint'], { ENVOY_SHUTDOWN_HOOK_TOKEN: TOKEN })]);
      classic.push(c);
      native.push(n);
      const installed = await install();
      installs.push(installed);
      hooks.push(await hookDuringDrain(installed.command));
      rmSync(installed.dir, { recursive: true, force: true });
    }
    const memory = (samples: readonly Memory[]): string =>
      `${medianAndSpread(summarize(samples.map((m) => m.rssKiB)), formatMiB, 'min-max')} RSS, ${medianAndSpread(summarize(samples.map((m) => m.anonKiB)), formatMiB, 'min-max')} RssAnon`;
    const start = (samples: readonly SidecarSample[]): string =>
      `manager answers /healthz ${medianAndSpread(summarize(samples.map((s) => s.startMs)), formatMs, 'min-max')} after exec`;
    const disk = `${(summarize(installs.map((i) => i.bytes)).median / 1_048_576).toFixed(1)} MiB in an emptyDir`;
    return [
      `Per pod, beside Envoy, over ${ROUNDS} rounds (median, min–max). The sidecars are the single executable (\`shutdown-manager\`, native with \`--drain-endpoint\` and a hook token) read ${IDLE_MS / 1000} s after they answer /healthz; \`install\` copies the same executable into a fresh directory on this machine's disk; the drain hook is that installed copy run through its loader (\`shutdown --no-ready-file --connections listeners --min-drain-duration 3s\` against the real Envoy from the chart's bootstrap and flags), read 1.5 s into the drain. RSS includes the executable's file pages, which pods on one node share through the page cache; RssAnon is what each pod really adds.`,
      '',
      table(
        ['mode', 'running beside Envoy', 'idle memory per pod', 'disk per pod', 'start-up work per pod'],
        [
          ['classic sidecar', 'shutdown-manager', memory(classic.map((s) => s.idle)), 'none (the image layer)', start(classic)],
          [
            'native sidecar',
            'shutdown-manager (init container, restartPolicy Always)',
            memory(native.map((s) => s.idle)),
            'none (the image layer)',
            start(native),
          ],
          [
            'sidecar-less',
            'nothing',
            'none',
            disk,
            `install ${medianAndSpread(summarize(installs.map((i) => i.ms)), formatMs, 'min-max')}, then the init container exits`,
          ],
        ],
      ),
      '',
      `While a pod terminates, the drain hook is one more process for a few seconds: ${memory(hooks)}. In the classic mode it runs in the sidecar container (beside the manager); in sidecar-less mode in Envoy's, where it counts against Envoy's memory limit; in native mode the manager drains itself and no process is added.`,
    ].join('\n');
  },
};
