// One real drain by the built executable against real Envoy at one size of configuration or of
// client connections (./workloads.ts), and what it cost: Envoy's CPU above its idle rate while the
// drain ran (/proc/<pid>/stat), and as long a replay of each peer's own poll against the same Envoy
// (./envoy-share.ts); Envoy's time per admin read (replayed after the drain) and the bytes read,
// the reads the hook made (counted by the admin tap in front of Envoy), the drain's duration, the
// release after the last busy connection's close, and the hook's own CPU and peak memory (from
// wait4 at its exit).
import { spawn } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { createServer, Agent as HttpAgent, type ServerResponse } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Bootstrap } from '../../test/support/chart/bootstrap.js';
import { freePort } from '../../test/support/ports.js';
import { http1Answer } from '../../test/support/protocols/clients.js';
import { type AdminTap, startAdminTap } from '../../test/support/real-envoy/admin-tap.js';
import { get, type RealEnvoy, startRealEnvoy } from '../../test/support/real-envoy/process.js';
import { replayCost } from '../../test/support/real-envoy/read-cost.js';
import { type Rusage, readRusage, underWait4 } from '../../test/support/rusage.js';
import { isStatsRead } from '../../test/support/stats-reads.js';
import { cpuOver, IDLE_WINDOW_MS, PEER_POLLS, pollAsPeer, shareAbove } from './envoy-share.js';
import { cleanEnv, EXECUTABLE, openFilesHardLimit, sleep, spawnTimed } from './processes.js';
import { readMemory } from './procfs.js';
import { summarize } from './stats.js';
import { bootstrapFor, type Target, trafficFor, type Workload } from './workloads.js';

/** The drain under test: the chart's defaults (charts/envoy-shutdown-manager/values.yaml, `shutdown`) as flags. */
export const HOOK_ARGS = [
  '--connections',
  'listeners',
  '--min-drain-duration',
  '10s',
  '--quiet-period',
  '5s',
  '--ignore-idle-connections',
  '--exit-at-connections',
  '0',
  '--check-interval',
  '1s',
  '--admin-timeout',
  '2s',
  '--drain-timeout',
  '60s',
] as const;
/** The busy connection's response is released this long after the drain began: past the minimum drain and the quiet period. */
export const CLOSE_AFTER_MS = 11_000;

export interface DrainCost {
  readonly envoyReadyMs: number;
  readonly envoyRssMiB: number;
  /** Every admin request the hook made, and those that were GET /stats. */
  readonly calls: number;
  readonly statsReads: number;
  /** The GETs among them: the reads whose cost to Envoy is replayed. */
  readonly gets: number;
  /** Per GET the hook made, averaged over its calls: Envoy's CPU (all threads), the answer's bytes. */
  readonly envoyCpuMsPerRead: number;
  readonly bytesPerRead: number;
  readonly drainMs: number;
  readonly result: string;
  /** Ready file written, after the busy connection's close seen by its client (ms). */
  readonly releaseMs: number;
  readonly hookCpuMs: number;
  readonly hookPeakKiB: number;
  /**
   * The same executable's `status` (the drain's connection reads and pairing, a fixed number of
   * them at every size), against the drained Envoy: its CPU, peak RSS and admin GETs, median of STATUS_RUNS.
   */
  readonly status: HookUsage & { readonly gets: number };
  /** 1-minute load average as the drain ran. */
  readonly load: number;
  /** The busy request, if it was not answered 200. */
  readonly lostRequests: number;
  /** Envoy's CPU above its idle rate, as a share of one core: over our drain (the hook's exec to its exit), and over as long a replay of each peer's poll. */
  readonly share: { readonly ours: number; readonly eg: number; readonly contour: number };
  /** Envoy's idle CPU (ms per s, over IDLE_WINDOW_MS before the drain) and the peers' reads in their replays. */
  readonly idleCpuMsPerS: number;
  readonly peerReads: { readonly eg: number; readonly contour: number };
}

/** The hook's CPU and peak RSS, from wait4 at its exit (test/support/rusage.ts). */
export type HookUsage = Rusage;

/** The executable's fixed cost: its CPU and peak RSS from exec to exit with nothing to do (`--version`). */
export async function startupUsage(dir: string): Promise<HookUsage> {
  const usageFile = join(dir, 'startup-usage.json');
  const exit = await spawnTimed(underWait4(usageFile, [EXECUTABLE, '--version']), { env: cleanEnv() }).exited;
  if (exit.code !== 0) throw new Error(`${EXECUTABLE} --version exited ${exit.code ?? exit.signal}: ${exit.stderr}`);
  return readRusage(usageFile);
}

interface Backend {
  readonly port: number;
  /** Resolves once a request for a path ending in /hold is held. */
  readonly held: Promise<void>;
  release(): void;
  close(): Promise<void>;
}

/** Answers everything at once except a path ending in /hold, which it holds until release(). */
async function startBackend(): Promise<Backend> {
  let holding: ServerResponse | undefined;
  let heldNow: () => void = () => undefined;
  const held = new Promise<void>((resolve) => (heldNow = resolve));
  const server = createServer((req, res) => {
    req.resume();
    if (req.url?.endsWith('/hold') === true) {
      holding = res;
      heldNow();
      return;
    }
    res.end('ok\n');
  });
  server.keepAliveTimeout = 120_000;
  await new Promise<void>((resolve) => server.listen({ host: '127.0.0.1', port: 0 }, resolve));
  return {
    port: (server.address() as AddressInfo).port,
    held,
    release: () => holding?.end('done\n'),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

interface Client {
  /** One GET; resolves when the answer has ended, with its status. */
  get(target: Target): Promise<number>;
  /** One GET sent with `Connection: close`; resolves with its status and Date.now() when its socket closed. */
  busy(target: Target): Promise<{ status: number; closedAt: number }>;
  close(): void;
}

function client(port: number, tls: boolean): Client {
  const agent = tls ? new HttpsAgent({ keepAlive: true, rejectUnauthorized: false }) : new HttpAgent({ keepAlive: true });
  const send = ({ path, host }: Target, options: { close?: boolean; onSocket?: (socket: Socket) => void } = {}) =>
    http1Answer({
      port,
      path,
      headers: { host, ...(options.close === true ? { connection: 'close' } : {}) },
      agent: options.close === true ? false : agent,
      timeoutMs: 60_000,
      ...(tls ? { servername: host } : {}),
      ...(options.onSocket === undefined ? {} : { onSocket: options.onSocket }),
    });
  return {
    get: async (target) => (await send(target)).status,
    busy: async (target) => {
      let closedAt: Promise<number> | undefined;
      const onSocket = (socket: Socket): void => {
        closedAt = new Promise((done) => socket.once('close', () => done(Date.now())));
      };
      const { status } = await send(target, { close: true, onSocket });
      if (closedAt === undefined) throw new Error('the busy request had no socket');
      return { status, closedAt: await closedAt };
    },
    close: () => agent.destroy(),
  };
}

/** h2load holding `clients` connections, each idle after one request, for at most `holdS` (Debian's nghttp2-client; prlimit raises its descriptor limit). */
function idleH2load(url: string, clients: number, http1: boolean, logFile: string, holdS: number): { stop(): Promise<void> } {
  const args = [
    `--nofile=${clients + 256}`,
    'h2load',
    ...(http1 ? ['--h1'] : []),
    '-c',
    String(clients),
    '-D',
    String(holdS),
    '--rps',
    '0.001',
    '--log-file',
    logFile,
    url,
  ];
  const child = spawn('prlimit', args, { stdio: 'ignore' });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()).once('error', () => resolve()));
  return {
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}

function logRows(file: string): number {
  try {
    return readFileSync(file, 'utf8')
      .split('\n')
      .filter((row) => row !== '').length;
  } catch {
    return 0;
  }
}

async function raiseNofile(pid: number, nofile: number): Promise<void> {
  const child = spawn('prlimit', ['--pid', String(pid), `--nofile=${nofile}`], { stdio: 'ignore' });
  const code = await new Promise<number | null>((resolve, reject) => child.once('error', reject).once('close', resolve));
  if (code !== 0) throw new Error(`prlimit --pid ${pid} --nofile=${nofile} failed`);
}

/** Sum of every non-admin listener's live connections, from Envoy directly. */
async function activeConnections(envoy: RealEnvoy): Promise<number> {
  const { body } = await get(envoy.adminAddress, `/stats?filter=${encodeURIComponent(String.raw`^listener\..*\.downstream_cx_active$`)}&format=json`);
  const stats = (JSON.parse(body) as { stats: Array<{ name: string; value: number }> }).stats;
  return stats.filter((s) => !s.name.startsWith('listener.admin.') && !/\.(worker_\d+|main_thread)\./.test(s.name)).reduce((sum, s) => sum + s.value, 0);
}

async function waitFor(what: string, timeoutMs: number, check: () => Promise<boolean> | boolean): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  const checked = (): Promise<boolean> => Promise.resolve(check()).catch((error: Error) => Promise.reject(new Error(`waiting for ${what}: ${error.message}`)));
  while (!(await checked())) {
    if (performance.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(100);
  }
}

/**
 * `status --watch` runs per size, each stopped after STATUS_READS reads of the stats: its reads are
 * the drain's (a full one, then the ones of the stats that moved), and as many at every size.
 */
const STATUS_RUNS = 3;
export const STATUS_READS = 20;
export const STATUS_ARGS = ['--connections', 'listeners', '--interval', '100ms', '--output', 'json', '--watch'] as const;

/** The executable's `status` through the tap, STATUS_RUNS times: median CPU, peak RSS, and the GETs each made. */
async function statusUsage(tap: AdminTap, dir: string): Promise<HookUsage & { readonly gets: number }> {
  const runs: Array<HookUsage & { gets: number }> = [];
  for (let n = 0; n < STATUS_RUNS; n += 1) {
    const before = tap.calls.length;
    const usageFile = join(dir, `status-usage-${n}.json`);
    const status = spawnTimed(
      underWait4(usageFile, [EXECUTABLE, 'status', '--admin-address', tap.adminAddress, '--ready-file', join(dir, 'ready'), ...STATUS_ARGS]),
      { env: cleanEnv() },
    );
    const reads = (): number => tap.calls.slice(before).filter(isStatsRead).length;
    for (const deadline = performance.now() + 60_000; reads() < STATUS_READS && status.child.exitCode === null && performance.now() < deadline; )
      await sleep(20);
    status.child.kill('SIGINT');
    const exit = await status.exited;
    if (exit.code !== 0) throw new Error(`status exited ${exit.code ?? exit.signal}: ${exit.stderr.slice(-2_000)}`);
    const usage = readRusage(usageFile);
    runs.push({ ...usage, gets: tap.calls.slice(before).filter((call) => call.method === 'GET').length });
  }
  const median = (values: number[]): number => summarize(values).median;
  return { cpuMs: median(runs.map((r) => r.cpuMs)), peakKiB: median(runs.map((r) => r.peakKiB)), gets: median(runs.map((r) => r.gets)) };
}

/** One drain at `workload`, in `dir` (scratch). */
export async function drainAtSize(workload: Workload, dir: string): Promise<DrainCost> {
  const cleanups: Array<() => Promise<void> | void> = [];
  try {
    const backend = await startBackend();
    cleanups.push(() => backend.close());
    const startedAt = performance.now();
    const bootstrap = bootstrapFor(workload, backend.port, await freePort()) as unknown as Bootstrap;
    const envoy = await startRealEnvoy({ bootstrap, args: ['--drain-strategy', 'immediate', '--drain-time-s', '60'], readyTimeoutMs: 300_000 });
    cleanups.push(() => envoy.stop());
    const envoyReadyMs = performance.now() - startedAt;
    const pid = envoy.child.pid as number;

    // The traffic: idle pooled connections, a scraper on the peer's stats listener, one busy request.
    const traffic = trafficFor(workload);
    const port = envoy.ports[traffic.listener];
    const statsPort = envoy.ports[traffic.statsListener];
    if (port === undefined || statsPort === undefined) throw new Error(`listeners not found: ${JSON.stringify(envoy.ports)}`);
    let idleCount = 2;
    if (workload.kind === 'connections') {
      idleCount = workload.idle;
      await raiseNofile(pid, Math.min(openFilesHardLimit(), workload.idle + 4_096));
      const half = Math.floor(workload.idle / 2);
      const runs = [
        { clients: half, http1: true, log: join(dir, 'idle-h1.tsv') },
        { clients: workload.idle - half, http1: false, log: join(dir, 'idle-h2.tsv') },
      ].filter((run) => run.clients > 0);
      for (const run of runs) {
        const h2load = idleH2load(`http://127.0.0.1:${port}${traffic.idle.path}`, run.clients, run.http1, run.log, 300);
        cleanups.push(() => h2load.stop());
      }
      await waitFor(
        `${workload.idle} idle connections from h2load`,
        180_000,
        async () => runs.every((run) => logRows(run.log) >= run.clients) && (await activeConnections(envoy)) >= workload.idle,
      );
    } else {
      const pooled = client(port, traffic.tls);
      cleanups.push(() => pooled.close());
      // Two requests at once: two pooled connections, idle once answered.
      const statuses = await Promise.all([pooled.get(traffic.idle), pooled.get(traffic.idle)]);
      if (statuses.some((status) => status !== 200)) throw new Error(`idle pooled requests answered ${statuses.join(', ')}`);
    }
    // The scraper as Prometheus leaves it between scrapes: one scrape, its connection kept alive.
    const scraper = client(statsPort, false);
    cleanups.push(() => scraper.close());
    const scraped = await scraper.get({ path: '/stats/prometheus', host: 'localhost' });
    if (scraped !== 200) throw new Error(`the scrape answered ${scraped}`);
    await waitFor('every idle connection counted', 30_000, async () => (await activeConnections(envoy)) >= idleCount + 1);

    // Envoy's idle rate, with every idle connection open and nothing asking it anything.
    const idle = await cpuOver(pid, () => sleep(IDLE_WINDOW_MS));

    // The busy request only now: Envoy's default route timeout (15 s, which the fixtures keep)
    // must not end it before the backend answers, CLOSE_AFTER_MS into the drain.
    const busySentAt = performance.now();
    const busy = client(port, traffic.tls).busy(traffic.busy);
    // Its failure is reported where it is awaited, or by the wait for it to be held.
    let busyFailed: Error | undefined;
    busy.catch(
      (error: Error) =>
        (busyFailed = new Error(`the busy request failed ${(performance.now() - busySentAt).toFixed(0)} ms after it was sent: ${error.message}`)),
    );
    await Promise.race([backend.held, busy.then(() => Promise.reject(new Error('the busy request was answered before the backend held it')))]);
    await waitFor('every connection counted', 30_000, async () => (await activeConnections(envoy)) >= idleCount + 2);

    // The hook, through the tap.
    const tap = await startAdminTap(envoy.adminAddress);
    cleanups.push(() => tap.close());
    let drainAt = 0;
    const drainStarted = new Promise<void>((resolve) =>
      tap.onCall((call) => {
        if (call.path !== '/drain_listeners') return;
        drainAt = call.receivedAt;
        resolve();
      }),
    );
    const readyFile = join(dir, 'ready');
    const usageFile = join(dir, 'usage.json');
    const load = loadavg()[0] ?? Number.NaN;
    let answered = { status: 0, closedAt: 0 };
    const drain = await cpuOver(pid, async () => {
      const hook = spawnTimed(underWait4(usageFile, [EXECUTABLE, 'shutdown', '--admin-address', tap.adminAddress, '--ready-file', readyFile, ...HOOK_ARGS]), {
        env: cleanEnv(),
      });
      await drainStarted;
      await sleep(drainAt + CLOSE_AFTER_MS - performance.now());
      backend.release();
      answered = await busy.catch(() => Promise.reject(busyFailed));
      const exit = await hook.exited;
      if (exit.code !== 0 && exit.code !== 3) throw new Error(`shutdown exited ${exit.code ?? exit.signal}: ${exit.stderr.slice(-2_000)}`);
    });
    const report = JSON.parse(readFileSync(readyFile, 'utf8')) as { result: string; elapsedMs: number };
    const releaseMs = statSync(readyFile).mtimeMs - answered.closedAt;
    const usage = readRusage(usageFile);
    const calls = [...tap.calls];

    // Nothing but the replays asks Envoy for anything now (every client connection is idle): each
    // peer's poll for as long as our drain ran, then our reads one after another.
    const peerReads = { eg: 0, contour: 0 };
    const eg = await cpuOver(pid, async () => (peerReads.eg = await pollAsPeer(envoy.adminAddress, PEER_POLLS.eg, drain.wallMs)));
    const contour = await cpuOver(pid, async () => (peerReads.contour = await pollAsPeer(envoy.adminAddress, PEER_POLLS.contour, drain.wallMs)));
    const envoyRssMiB = readMemory(pid).rssKiB / 1024;
    const perRead = await replayCost(pid, envoy.adminAddress, calls);
    const status = await statusUsage(tap, dir);
    return {
      envoyReadyMs,
      envoyRssMiB,
      calls: calls.length,
      statsReads: calls.filter(isStatsRead).length,
      gets: calls.filter((call) => call.method === 'GET').length,
      envoyCpuMsPerRead: perRead.cpuMs,
      bytesPerRead: perRead.bytes,
      drainMs: report.elapsedMs,
      result: report.result,
      releaseMs,
      hookCpuMs: usage.cpuMs,
      hookPeakKiB: usage.peakKiB,
      status,
      load,
      lostRequests: answered.status === 200 ? 0 : 1,
      share: { ours: shareAbove(drain, idle), eg: shareAbove(eg, idle), contour: shareAbove(contour, idle) },
      idleCpuMsPerS: (idle.cpuMs / idle.wallMs) * 1_000,
      peerReads,
    };
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup();
  }
}
