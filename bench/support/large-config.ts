// What a large configuration costs Envoy per admin read: real Envoy started from a peer's fixture
// grown to N filter chains on M listeners (test/support/large-config/), every listener and the
// admin API on loopback ports the kernel picks. Per endpoint: the answer's bytes, its latency on
// an otherwise idle Envoy (the admin API runs on Envoy's main thread, so this is main-thread time
// plus a loopback round trip), and Envoy's own CPU time per call from /proc/<pid>/stat.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { type LargeConfigSize, largeBootstrap, onLoopback } from '../../test/support/large-config/expand.js';
import { testCertificate } from '../../test/support/peer-fixtures/certificate.js';
import type { PeerName } from '../../test/support/peer-fixtures/fixtures.js';
import { ensureEnvoyBinary } from '../../test/support/real-envoy/binary.js';
import { adminGet } from '../../test/support/real-envoy/read-cost.js';
import { cpuTimeMs, readMemory } from './procfs.js';
import { summarize } from './stats.js';

/** The drain's one /stats read: per-listener connections, per-connection-manager requests, and the per-listener HTTP names that pair them. */
const DRAIN_FILTER = String.raw`^(listener\..*\.downstream_cx_(active|total)|http\..*\.downstream_(cx_active|rq_active|rq_total)|listener\..*\.http\..*\.downstream_rq_completed)$`;
const LISTENER_ACTIVE = String.raw`^listener\..*\.downstream_cx_active$`;
const q = encodeURIComponent;

/** Each admin call measured, by a short label. */
const ENDPOINTS: ReadonlyArray<readonly [string, string]> = [
  ['drain filter, json', `/stats?filter=${q(DRAIN_FILTER)}&format=json`],
  ['listener cx_active', `/stats?filter=${q(LISTENER_ACTIVE)}`],
  ['drain filter, type=Gauges', `/stats?filter=${q(DRAIN_FILTER)}&format=json&type=Gauges`],
  ['drain filter, type=Counters', `/stats?filter=${q(DRAIN_FILTER)}&format=json&type=Counters`],
  ['drain filter, usedonly', `/stats?usedonly&filter=${q(DRAIN_FILTER)}&format=json`],
  ['filter matching nothing', `/stats?filter=${q('^no_such_stat$')}`],
  ['prefix regex ^listener\\.', `/stats?filter=${q(String.raw`^listener\.`)}`],
  ['whole /stats json', '/stats?format=json'],
  ['whole /stats, type=Gauges', '/stats?type=Gauges'],
  ['prometheus, drain filter', `/stats/prometheus?filter=${q(DRAIN_FILTER)}`],
  ['prometheus, usedonly+filter', `/stats/prometheus?usedonly&filter=${q(DRAIN_FILTER)}`],
  ['whole /stats/prometheus', '/stats/prometheus'],
  ['/server_info', '/server_info'],
  ['/ready', '/ready'],
  ['/memory', '/memory'],
  ['/listeners', '/listeners'],
  ['/listeners?format=json', '/listeners?format=json'],
  ['config_dump listeners', '/config_dump?mask=static_listeners,dynamic_listeners'],
];

interface EndpointCost {
  readonly label: string;
  readonly bytes: number;
  /** Median latency of one call on an idle Envoy. */
  readonly medianMs: number;
  /** Envoy's CPU time (all threads) per call, over the batch. */
  readonly cpuMsPerCall: number;
}

export interface SizeCost {
  readonly peer: PeerName;
  readonly size: LargeConfigSize;
  readonly readyMs: number;
  readonly rssMiB: number;
  readonly endpoints: readonly EndpointCost[];
}

/** Starts Envoy on `bootstrap`, waits until /ready is 200 (bounded), runs `use`, stops it. */
async function withEnvoy<T>(bootstrap: object, use: (pid: number, admin: string, readyMs: number) => Promise<T>): Promise<T> {
  const binary = await ensureEnvoyBinary();
  const dir = mkdtempSync(join(tmpdir(), 'esm-large-config-'));
  const config = join(dir, 'envoy.json');
  const adminFile = join(dir, 'admin-address');
  writeFileSync(config, JSON.stringify(bootstrap));
  const startedAt = performance.now();
  // The access logs name /dev/stdout: a file it can open, not a pipe.
  const child = spawn(
    binary,
    ['--config-path', config, '--admin-address-path', adminFile, '--use-dynamic-base-id', '--concurrency', '2', '--log-level', 'error'],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-4_000);
  });
  let exited = false;
  const exit = new Promise<void>((done) =>
    child.once('exit', () => {
      exited = true;
      done();
    }),
  );
  try {
    const deadline = startedAt + 180_000;
    let admin = '';
    for (;;) {
      if (exited) throw new Error(`envoy exited before it was ready: ${stderr}`);
      if (performance.now() > deadline) throw new Error('envoy not ready in 180 s');
      admin = admin === '' ? readAdmin(adminFile) : admin;
      if (admin !== '' && (await adminGet(admin, '/ready', 2_000).catch(() => undefined))?.status === 200) break;
      await new Promise((done) => setTimeout(done, 20));
    }
    const pid = child.pid;
    if (pid === undefined) throw new Error('envoy has no pid');
    return await use(pid, admin, performance.now() - startedAt);
  } finally {
    if (!exited) child.kill('SIGKILL');
    await exit;
    rmSync(dir, { recursive: true, force: true });
  }
}

function readAdmin(file: string): string {
  try {
    return readFileSync(file, 'utf8').trim();
  } catch {
    return '';
  }
}

/** One endpoint: a warm-up call, then `calls` calls one after another. */
async function measure(pid: number, admin: string, label: string, path: string, calls: number): Promise<EndpointCost> {
  const first = await adminGet(admin, path, 60_000);
  if (first.status !== 200) throw new Error(`${path}: status ${first.status}`);
  const latencies: number[] = [];
  const cpuBefore = cpuTimeMs(pid);
  for (let i = 0; i < calls; i += 1) {
    const start = performance.now();
    await adminGet(admin, path, 60_000);
    latencies.push(performance.now() - start);
  }
  const cpuMsPerCall = (cpuTimeMs(pid) - cpuBefore) / calls;
  return { label, bytes: first.bytes, medianMs: summarize(latencies).median, cpuMsPerCall };
}

/** Every endpoint at one size; the config dump gets fewer calls (it is the slow one). */
export async function measureSize(peer: PeerName, size: LargeConfigSize, calls = 10): Promise<SizeCost> {
  const env = { backend: { address: '127.0.0.1', port: 9 }, certificate: testCertificate() };
  const bootstrap = onLoopback(largeBootstrap(peer, size, env));
  return withEnvoy(bootstrap, async (pid, admin, readyMs) => {
    const rssMiB = readMemory(pid).rssKiB / 1024;
    const endpoints: EndpointCost[] = [];
    for (const [label, path] of ENDPOINTS) endpoints.push(await measure(pid, admin, label, path, path.startsWith('/config_dump') ? 3 : calls));
    return { peer, size, readyMs, rssMiB, endpoints };
  });
}
