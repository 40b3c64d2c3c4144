// What the admin reads a drain made cost Envoy: each distinct GET replayed straight to Envoy's
// admin API (TCP or a unix socket), one call after another, Envoy's CPU time (all its threads)
// measured over the batch, and the results weighted by how often the drain sent each GET. The
// bench runs it beside Envoy, the sandboxed drop-in pod inside its namespace.
import { request } from 'node:http';
import { performance } from 'node:perf_hooks';
import { cpuTimeMs } from '../proc-cpu.js';

/** Each distinct read is replayed, after one warm-up, at least MIN_REPLAYS times and until Envoy's CPU moved REPLAY_CPU_MS (ten clock ticks), or MAX_REPLAYS. */
const MIN_REPLAYS = 10;
const MAX_REPLAYS = 400;
const REPLAY_CPU_MS = 100;
const READ_TIMEOUT_MS = 60_000;

export interface ReadCost {
  /** Envoy's CPU per read, all threads (its 5 s stats flush included). */
  readonly cpuMs: number;
  /** The median round trip. */
  readonly wallMs: number;
  /** The answer's size. */
  readonly bytes: number;
}

/** One GET straight to Envoy's admin API (`host:port` or `unix:/path`), counting the answer's bytes without keeping them (a dump may be 80 MB). */
export function adminGet(admin: string, path: string, timeoutMs = READ_TIMEOUT_MS): Promise<{ status: number; bytes: number }> {
  const at = admin.lastIndexOf(':');
  const target = admin.startsWith('unix:')
    ? { socketPath: admin.slice('unix:'.length) }
    : { host: admin.slice(0, at).replace(/^\[(.*)\]$/, '$1'), port: Number(admin.slice(at + 1)) };
  return new Promise((resolve, reject) => {
    const req = request({ ...target, path, agent: false, timeout: timeoutMs }, (res) => {
      let bytes = 0;
      res.on('data', (chunk: Buffer) => (bytes += chunk.length));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes }));
    });
    req.on('timeout', () => req.destroy(new Error(`GET ${path}: no answer in ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end();
  });
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** Envoy's CPU (all threads) and the median round trip of one read, replayed one call after another. */
async function readCost(pid: number, admin: string, path: string): Promise<ReadCost> {
  const first = await adminGet(admin, path);
  if (first.status !== 200) throw new Error(`${path}: status ${first.status}`);
  const walls: number[] = [];
  const cpuBefore = cpuTimeMs(pid);
  while (walls.length < MIN_REPLAYS || (cpuTimeMs(pid) - cpuBefore < REPLAY_CPU_MS && walls.length < MAX_REPLAYS)) {
    const start = performance.now();
    await adminGet(admin, path);
    walls.push(performance.now() - start);
  }
  return { cpuMs: (cpuTimeMs(pid) - cpuBefore) / walls.length, wallMs: median(walls), bytes: first.bytes };
}

const pathOf = (call: { readonly path: string; readonly query: string }): string => (call.query === '' ? call.path : `${call.path}?${call.query}`);

/** Envoy's cost per GET among `calls` (as an admin tap recorded them): each distinct one replayed, weighted by how often it was sent. */
export async function replayCost(
  pid: number,
  admin: string,
  calls: ReadonlyArray<{ readonly method: string; readonly path: string; readonly query: string }>,
): Promise<ReadCost> {
  const gets = calls.filter((call) => call.method === 'GET');
  const costs = new Map<string, ReadCost>();
  for (const path of new Set(gets.map(pathOf))) costs.set(path, await readCost(pid, admin, path));
  const sum = { cpuMs: 0, wallMs: 0, bytes: 0 };
  for (const call of gets) {
    const cost = costs.get(pathOf(call));
    if (cost === undefined) continue;
    sum.cpuMs += cost.cpuMs;
    sum.wallMs += cost.wallMs;
    sum.bytes += cost.bytes;
  }
  const n = Math.max(1, gets.length);
  return { cpuMs: sum.cpuMs / n, wallMs: sum.wallMs / n, bytes: sum.bytes / n };
}
