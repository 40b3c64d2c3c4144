// Ten thousand client connections through real Envoy 1.40 while our `shutdown` drains it: most are
// idle pooled connections (each made one request and keeps its connection, half HTTP/1.1 keep-alive,
// half HTTP/2), a few are busy (long requests the upstream holds and releases at known times during
// the drain). Every connection comes from h2load (Debian's nghttp2-client), a real load generator:
// in timing mode with a request rate far below one per run, each of its clients makes one request
// and then holds its connection open, idle, until the run's duration is over. h2load prints its
// totals only at that end, so the idle runs' account is their per-request log (one row as each
// response completes) and the test stops them once the drain is over, rather than waiting.
import { type ChildProcess, spawn } from 'node:child_process';
import { watch } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import { createServer, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Bootstrap } from '../support/chart/bootstrap.js';
import { cleanEnv, startCli, tempDir } from '../support/cli.js';
import { pollUntil } from '../support/poll.js';
import { listenOnLoopback } from '../support/ports.js';
import { get, startRealEnvoy } from '../support/real-envoy/process.js';

const cleanups: Array<() => unknown> = [];
const defer = (cleanup: () => unknown): void => void cleanups.push(cleanup);
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Idle pooled connections, per protocol: 10,000 in all. */
const IDLE_PER_PROTOCOL = 5_000;
const IDLE = 2 * IDLE_PER_PROTOCOL;
/** Busy requests: three HTTP/1.1 connections with one each, two HTTP/2 connections with two streams each. */
const BUSY_HTTP1 = 3;
const BUSY_HTTP2_CONNECTIONS = 2;
const BUSY_HTTP2_STREAMS = 2;
const BUSY = BUSY_HTTP1 + BUSY_HTTP2_CONNECTIONS * BUSY_HTTP2_STREAMS;
/** One busy response released every this many ms from the drain's start: the last after the minimum drain and quiet period. */
const RELEASE_EVERY_MS = 250;
/**
 * The idle runs' duration, a bound: far past their ramp and the drain on a busy machine (the test
 * stops them after the drain). Too short would show as idle connections gone at the release.
 */
const IDLE_HOLD_S = 60;
/** File descriptors for Envoy: every client connection, the few upstream ones, and room for its own. */
const ENVOY_NOFILE = IDLE + 2_048;

const LISTENER = 'scale_in';
const CONNECTION_MANAGER = 'scale_http';
const HCM = 'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager';
const ROUTER = 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router';
const loopback = { socket_address: { address: '127.0.0.1', port_value: 0 } };

/**
 * One listener serving HTTP/1.1 and h2c (named unlike its connection manager): `/hold` goes to the
 * upstream, anything else Envoy answers itself, so the idle clients' first requests need no upstream
 * connection each. The backlog takes the clients' burst of connects without SYN retries.
 */
function scaleBootstrap(upstreamPort: number): Bootstrap {
  const bootstrap = {
    admin: { address: loopback },
    static_resources: {
      listeners: [
        {
          name: 'ingress',
          stat_prefix: LISTENER,
          address: loopback,
          tcp_backlog_size: 4_096,
          filter_chains: [
            {
              filters: [
                {
                  name: 'envoy.filters.network.http_connection_manager',
                  typed_config: {
                    '@type': HCM,
                    stat_prefix: CONNECTION_MANAGER,
                    codec_type: 'AUTO',
                    route_config: {
                      virtual_hosts: [
                        {
                          name: 'all',
                          domains: ['*'],
                          routes: [
                            { match: { prefix: '/hold' }, route: { cluster: 'held', timeout: '0s' } },
                            { match: { prefix: '/' }, direct_response: { status: 200, body: { inline_string: 'ok\n' } } },
                          ],
                        },
                      ],
                    },
                    http_filters: [{ name: 'envoy.filters.http.router', typed_config: { '@type': ROUTER } }],
                  },
                },
              ],
            },
          ],
        },
      ],
      clusters: [
        {
          name: 'held',
          type: 'STATIC',
          connect_timeout: '2s',
          load_assignment: {
            cluster_name: 'held',
            endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: upstreamPort } } } }] }],
          },
        },
      ],
    },
  };
  // The chart's Bootstrap type names only what the chart's tests read; this one has other fields.
  return bootstrap as Bootstrap;
}

interface HeldUpstream {
  readonly port: number;
  /** Resolves once this many requests are held. */
  held(count: number): Promise<void>;
  /** Answers the oldest held request; returns when (Date.now()), just before its response left. */
  releaseOne(): number;
  close(): Promise<void>;
}

async function startHeldUpstream(): Promise<HeldUpstream> {
  const held: ServerResponse[] = [];
  const waiters = new Set<() => void>();
  const server = createServer((req, res) => {
    req.resume();
    held.push(res);
    for (const wake of waiters) wake();
  });
  server.keepAliveTimeout = 60_000;
  const port = await listenOnLoopback(server);
  return {
    port,
    held: (count) =>
      new Promise((resolve) => {
        const check = (): void => {
          if (held.length < count) return;
          waiters.delete(check);
          resolve();
        };
        waiters.add(check);
        check();
      }),
    releaseOne() {
      const res = held.shift();
      if (res === undefined) throw new Error('no held request to release');
      const at = Date.now();
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '5' }).end('done\n');
      return at;
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** What h2load reports at its end: its requests by outcome, and by status class. */
interface H2loadReport {
  readonly total: number;
  readonly started: number;
  readonly done: number;
  readonly succeeded: number;
  readonly failed: number;
  readonly errored: number;
  readonly timeout: number;
  readonly status2xx: number;
}

function parseH2load(stdout: string): H2loadReport {
  const requests = /requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, (\d+) failed, (\d+) errored, (\d+) timeout/.exec(stdout);
  const codes = /status codes: (\d+) 2xx/.exec(stdout);
  if (requests === null || codes === null) throw new Error(`h2load printed no totals:\n${stdout.slice(-2_000)}`);
  const [total, started, done, succeeded, failed, errored, timeout] = requests.slice(1).map(Number) as [number, number, number, number, number, number, number];
  return { total, started, done, succeeded, failed, errored, timeout, status2xx: Number(codes[1]) };
}

interface H2load {
  readonly child: ChildProcess;
  /** Its totals once it exits 0; rejects with its output otherwise. */
  readonly report: Promise<H2loadReport>;
}

/** h2load with room for `clients` connections (prlimit raises its descriptor limit; the hard one needs root). */
function startH2load(args: readonly string[], clients: number): H2load {
  const child = spawn('prlimit', [`--nofile=${clients + 256}`, 'h2load', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const report = new Promise<H2loadReport>((resolve, reject) => {
    child.once('error', (error) =>
      reject(new Error(`cannot run prlimit/h2load (Debian's util-linux and nghttp2-client; node test/setup/debian.mjs installs them): ${error.message}`)),
    );
    child.once('close', (code, signal) => {
      if (code === 0) resolve(parseH2load(output));
      else reject(new Error(`h2load ${args.join(' ')} ended with ${code ?? signal}:\n${output.slice(-2_000)}`));
    });
  });
  report.catch(() => undefined);
  // The idle runs are stopped here, after the drain, long before their duration is over.
  defer(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    return report.catch(() => undefined);
  });
  return { child, report };
}

/** One row of h2load's --log-file per completed request: its status and when its response was complete at the client (ms since the epoch). */
async function responses(logFile: string): Promise<Array<{ status: number; endedAt: number }>> {
  const rows = (await readFile(logFile, 'utf8').catch(() => '')).split('\n').filter((row) => row !== '');
  return rows.map((row) => {
    const [startUs, status, durationUs] = row.split('\t').map(Number) as [number, number, number];
    return { status, endedAt: (startUs + durationUs) / 1_000 };
  });
}

/** Envoy's counters and gauges by name, from one filtered /stats read. */
async function stats(adminAddress: string): Promise<Map<string, number>> {
  const names = `^(listener\\.${LISTENER}\\.downstream_cx_(active|total)|http\\.${CONNECTION_MANAGER}\\.downstream_rq_(active|total|2xx))$`;
  const answer = await get(adminAddress, `/stats?filter=${encodeURIComponent(names)}&format=json`);
  const parsed = JSON.parse(answer.body) as { stats: Array<{ name: string; value: number }> };
  return new Map(parsed.stats.map((s) => [s.name, s.value]));
}

/** Raises a running process's descriptor limit to `nofile` when it is lower (Envoy needs one per client connection; a hard limit needs root). */
async function ensureNofile(pid: number, nofile: number): Promise<void> {
  const soft = /^Max open files\s+(\d+|unlimited)/m.exec(await readFile(`/proc/${pid}/limits`, 'utf8'))?.[1];
  if (soft === 'unlimited' || Number(soft) >= nofile) return;
  const child = spawn('prlimit', ['--pid', String(pid), `--nofile=${nofile}`], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', resolve);
  });
  if (code !== 0)
    throw new Error(`prlimit --pid ${pid} --nofile=${nofile} failed (Envoy needs that many descriptors; raising a hard limit needs root): ${stderr}`);
}

/** Resolves with Date.now() once `name` exists in `dir` (the ready file is renamed into place whole). */
function appears(dir: string, name: string): { at: Promise<number>; stop(): void } {
  const watcher = watch(dir);
  const at = new Promise<number>((resolve) => {
    const check = (): void => {
      void readdir(dir).then((entries) => {
        if (entries.includes(name)) resolve(Date.now());
      });
    };
    watcher.on('change', check);
    check();
  });
  return { at, stop: () => watcher.close() };
}

/** CPU seconds a live process has used so far (user + system), from /proc/<pid>/stat. */
async function cpuSeconds(pid: number): Promise<number> {
  const fields = (await readFile(`/proc/${pid}/stat`, 'utf8')).replace(/^.*\) /s, '').split(' ');
  // After the command: state is field 3, utime 14 and stime 15 (1-based), in clock ticks of 1/100 s.
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

describe('10,000 client connections through real Envoy during a drain', () => {
  it('idle pooled HTTP/1.1 and HTTP/2 connections do not hold it; busy ones do, lose nothing, and the release follows the last', async () => {
    const upstream = await startHeldUpstream();
    defer(() => upstream.close());
    const envoy = await startRealEnvoy({ bootstrap: scaleBootstrap(upstream.port), args: ['--drain-strategy', 'immediate', '--drain-time-s', '60'] });
    defer(() => envoy.stop());
    const pid = envoy.child.pid;
    if (pid === undefined) throw new Error('Envoy has no pid');
    await ensureNofile(pid, ENVOY_NOFILE);
    const url = `http://127.0.0.1:${envoy.ports.ingress}`;

    // The idle pools: one request per client at once, the next not due for 1,000 s.
    const logs = tempDir();
    defer(logs.cleanup);
    const idleLogs = [join(logs.path, 'idle-http1.tsv'), join(logs.path, 'idle-http2.tsv')];
    const rampStartedAt = Date.now();
    const idle = [
      startH2load(
        ['--h1', '-c', String(IDLE_PER_PROTOCOL), '-D', String(IDLE_HOLD_S), '--rps', '0.001', '--log-file', idleLogs[0] as string, `${url}/`],
        IDLE_PER_PROTOCOL,
      ),
      startH2load(
        ['-c', String(IDLE_PER_PROTOCOL), '-D', String(IDLE_HOLD_S), '--rps', '0.001', '--log-file', idleLogs[1] as string, `${url}/`],
        IDLE_PER_PROTOCOL,
      ),
    ];
    let seen = new Map<string, number>();
    let answered: number[] = [];
    const cx = `listener.${LISTENER}.downstream_cx_active`;
    const rq2xx = `http.${CONNECTION_MANAGER}.downstream_rq_2xx`;
    // Envoy offers no push and h2load no event before its end: both are polled.
    await pollUntil(
      `${IDLE} idle connections, each with its request answered`,
      async () => {
        seen = await stats(envoy.adminAddress);
        answered = await Promise.all(idleLogs.map(async (log) => (await responses(log)).length));
        return seen.get(cx) === IDLE && seen.get(rq2xx) === IDLE && answered.every((count) => count === IDLE_PER_PROTOCOL);
      },
      { timeoutMs: 30_000, everyMs: 100, lastSeen: () => `${JSON.stringify(Object.fromEntries(seen))}, client rows ${answered.join(' + ')}` },
    );
    const rampMs = Date.now() - rampStartedAt;
    // Each idle client's one request, as the client saw it: answered 2xx, in full.
    for (const log of idleLogs) expect((await responses(log)).filter((row) => row.status !== 200)).toEqual([]);

    // The busy ones: each request held by the upstream until the test releases it.
    const busyLogs = [join(logs.path, 'http1.tsv'), join(logs.path, 'http2.tsv')];
    const busy = [
      startH2load(['--h1', '-c', String(BUSY_HTTP1), '-n', String(BUSY_HTTP1), '--log-file', busyLogs[0] as string, `${url}/hold`], BUSY_HTTP1),
      startH2load(
        [
          '-c',
          String(BUSY_HTTP2_CONNECTIONS),
          '-n',
          String(BUSY_HTTP2_CONNECTIONS * BUSY_HTTP2_STREAMS),
          '-m',
          String(BUSY_HTTP2_STREAMS),
          '--log-file',
          busyLogs[1] as string,
          `${url}/hold`,
        ],
        BUSY_HTTP2_CONNECTIONS,
      ),
    ];
    await upstream.held(BUSY);
    const before = await stats(envoy.adminAddress);
    expect(before.get(cx)).toBe(IDLE + BUSY_HTTP1 + BUSY_HTTP2_CONNECTIONS);
    expect(before.get(`http.${CONNECTION_MANAGER}.downstream_rq_active`)).toBe(BUSY);

    const dir = tempDir();
    defer(dir.cleanup);
    const ready = appears(dir.path, 'ready');
    defer(() => ready.stop());
    const hook = startCli(
      [
        'shutdown',
        '--admin-address',
        envoy.adminAddress,
        '--ready-file',
        join(dir.path, 'ready'),
        '--connections',
        'listeners',
        '--ignore-idle-connections',
        '--min-drain-duration',
        '1s',
        '--quiet-period',
        '500ms',
        '--drain-timeout',
        '10s',
      ],
      cleanEnv(),
    );
    defer(() => {
      hook.child.kill('SIGKILL');
      return hook.result.catch(() => undefined);
    });
    await hook.waitForLog((line) => line.msg === 'graceful drain started');

    // One busy response released every RELEASE_EVERY_MS; the drain must still be running before each.
    const releases: number[] = [];
    for (let i = 0; i < BUSY; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, RELEASE_EVERY_MS));
      expect(hook.child.exitCode).toBeNull();
      releases.push(upstream.releaseOne());
    }
    const lastReleasedAt = releases.at(-1) as number;

    const readyAt = await ready.at;
    const hookCpuS = await cpuSeconds(hook.child.pid as number).catch(() => Number.NaN);
    // Read at once after the release: every idle connection still open, none replaced.
    const after = await stats(envoy.adminAddress);
    const result = await hook.result;
    expect(result.code).toBe(0);
    const readyPath = join(dir.path, 'ready');
    const report = JSON.parse(await readFile(readyPath, 'utf8')) as { result: string; connections: number; elapsedMs: number };
    expect(report.result).toBe('drained');
    const writtenAt = (await stat(readyPath)).mtimeMs;
    expect(after.get(cx)).toBeGreaterThanOrEqual(IDLE);
    expect(after.get(`listener.${LISTENER}.downstream_cx_total`)).toBe(IDLE + BUSY_HTTP1 + BUSY_HTTP2_CONNECTIONS);
    // Nothing else was sent: the idle clients stayed idle, so no request was left unanswered at the release.
    expect(after.get(`http.${CONNECTION_MANAGER}.downstream_rq_total`)).toBe(IDLE + BUSY);
    expect(idle.every((run) => run.child.exitCode === null)).toBe(true);

    // Busy: every request answered 2xx, in full; Envoy released only after the last response left the upstream.
    const busyReports = await Promise.all(busy.map((run) => run.report));
    for (const [run, count] of [
      [busyReports[0], BUSY_HTTP1],
      [busyReports[1], BUSY_HTTP2_CONNECTIONS * BUSY_HTTP2_STREAMS],
    ] as const) {
      expect(run).toMatchObject({ total: count, started: count, done: count, succeeded: count, failed: 0, errored: 0, timeout: 0, status2xx: count });
    }
    expect(readyAt).toBeGreaterThanOrEqual(lastReleasedAt);
    const ends = (await Promise.all(busyLogs.map(responses))).flat();
    expect(ends.map((row) => row.status)).toEqual(Array<number>(BUSY).fill(200));
    const lastReceivedAt = Math.max(...ends.map((row) => row.endedAt));

    console.log(
      JSON.stringify({
        connections: IDLE + BUSY_HTTP1 + BUSY_HTTP2_CONNECTIONS,
        busyRequests: BUSY,
        rampMs,
        drainElapsedMs: report.elapsedMs,
        lastReleaseToReadyMs: Math.round(writtenAt - lastReleasedAt),
        lastReceivedToReadyMs: Math.round(writtenAt - lastReceivedAt),
        lastReceivedToReadySeenMs: Math.round(readyAt - lastReceivedAt),
        hookCpuS,
      }),
    );
  });
});
