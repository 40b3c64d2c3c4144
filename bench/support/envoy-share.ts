// What a drain, or a peer's poll, costs Envoy as a whole: its utime+stime (every thread,
// /proc/<pid>/stat) over a window, less what Envoy spends idle over as long, as a share of the
// window. The peers' polls are replayed as their hooks send them, one read per poll.
import { performance } from 'node:perf_hooks';
import { adminGet } from '../../test/support/real-envoy/read-cost.js';
import { sleep } from './processes.js';
import { cpuTimeMs } from './procfs.js';

/**
 * The idle window: Envoy's stats flush interval (5 s by default, which the fixtures keep), so it
 * holds one flush, as every 5 s of a drain does; at a large size a flush is most of Envoy's idle CPU.
 */
export const IDLE_WINDOW_MS = 5_000;

export interface CpuWindow {
  /** Envoy's CPU time over the window, all threads. */
  readonly cpuMs: number;
  readonly wallMs: number;
}

/** Envoy's CPU over `use`, and how long `use` took. */
export async function cpuOver(pid: number, use: () => Promise<unknown>): Promise<CpuWindow> {
  const cpuBefore = cpuTimeMs(pid);
  const startedAt = performance.now();
  await use();
  return { cpuMs: cpuTimeMs(pid) - cpuBefore, wallMs: performance.now() - startedAt };
}

/** The share of one core the window took above Envoy's idle rate. */
export function shareAbove(window: CpuWindow, idle: CpuWindow): number {
  return (window.cpuMs - (idle.cpuMs / idle.wallMs) * window.wallMs) / window.wallMs;
}

export interface PeerPoll {
  readonly label: string;
  /** The read exactly as the peer's hook sends it (path and raw query). */
  readonly path: string;
  /** The hook sleeps this long after each read. */
  readonly sleepMs: number;
}

/** The peers' drain hooks' reads, at the commits test/fixtures/peers/README.md names. */
export const PEER_POLLS = {
  // internal/cmd/envoy/shutdown_manager.go: getDownstreamCXActive, then time.Sleep(1 * time.Second); its URL has the double slash.
  eg: { label: 'Envoy Gateway', path: String.raw`//stats?filter=^listener\..*\.downstream_cx_active$&format=json`, sleepMs: 1_000 },
  // cmd/contour/shutdownmanager.go: getOpenConnections (over the admin socket), then time.Sleep(s.checkInterval), 5 s by default.
  contour: { label: 'Contour', path: String.raw`/stats/prometheus?filter=^http\..*\.downstream_cx_active$`, sleepMs: 5_000 },
} as const satisfies Record<string, PeerPoll>;

/** `poll` against the admin API at `admin` for `durationMs`, as the peer's loop runs it (a read, then its sleep); the reads made. */
export async function pollAsPeer(admin: string, poll: PeerPoll, durationMs: number): Promise<number> {
  const end = performance.now() + durationMs;
  let reads = 0;
  for (const most = Math.ceil(durationMs / poll.sleepMs) + 1; reads < most; ) {
    const { status } = await adminGet(admin, poll.path).catch((error: Error) => Promise.reject(new Error(`${poll.label}'s read: ${error.message}`)));
    if (status !== 200) throw new Error(`${poll.label}'s read ${poll.path}: status ${status}`);
    reads += 1;
    // The window ends within this sleep: no read past it.
    const left = end - performance.now();
    await sleep(Math.min(poll.sleepMs, left));
    if (left <= poll.sleepMs) break;
  }
  return reads;
}
