// One generated pod's termination, run inside the sandbox (its own loopback, /tmp and /admin):
// real Envoy from a peer-shaped bootstrap, the manager and the preStop hook exec'd by the argv the
// peer's controller renders, Envoy's httpGet preStop, then SIGTERM to the manager. Everything
// seen is returned for the test (or the bench: the manager's idle cost, the hook's CPU) to judge;
// nothing is decided here.
import { type ChildProcess, spawn } from 'node:child_process';
import { copyFileSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { Agent, createServer, request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { CONTOUR_REAL_ADMIN_SOCKET, contourBootstrap, EG_REAL_ADMIN_PORT, egBootstrap } from '../peer-fixtures/pod-bootstraps.js';
import { bounded, pollUntil } from '../poll.js';
import { type Connection, idleHttp1, idleHttp2 } from '../protocols/clients.js';
import { startAdminTap } from '../real-envoy/admin-tap.js';
import { type ReadCost, replayCost } from '../real-envoy/read-cost.js';

export interface PodScenario {
  readonly peer: 'envoy-gateway' | 'contour';
  readonly envoyBinary: string;
  /** The manager container's command + args; undefined: no manager. */
  readonly manager?: readonly string[];
  /** The manager container's preStop exec; undefined: none (Envoy's hook alone). */
  readonly hook?: readonly string[];
  /** Variables the container sets for the hook besides PATH (a peer's pod sets none of ours). */
  readonly hookEnv?: Readonly<Record<string, string>>;
  /** Envoy Gateway: where Envoy binds its admin API (an IPv6 gateway uses ::1). */
  readonly adminHost?: '127.0.0.1' | '::1';
  /** Idle keep-alive connections held open on these ports (one request answered on each first). */
  readonly idleOn?: readonly number[];
  /** Close every idle connection this long after the hook started, or each (in `idleOn`'s order) at its own time; undefined: keep them. */
  readonly closeIdleAfterMs?: number | readonly number[];
  /** Nothing listens where the hook looks for Envoy's admin API. */
  readonly adminUnreachable?: boolean;
  /**
   * A bootstrap file to run instead of the peer's pod bootstrap (a peer fixture, e.g. grown large),
   * its admin API already where the tap forwards to (EG_REAL_ADMIN_PORT, CONTOUR_REAL_ADMIN_SOCKET).
   */
  readonly bootstrapFile?: string;
  /** A backend on 127.0.0.1 at this port answering every request 200 (the fixture's clusters' endpoint). */
  readonly backendPort?: number;
  /** Idle pooled connections held open on this port, one HTTP/1.1 and one HTTP/2 (h2c), each after one answered request. */
  readonly idlePoolOn?: number;
  /** A metrics scraper calling this port and path while the hook runs: one keep-alive request every 100 ms, at most 300. */
  readonly scrape?: { readonly port: number; readonly path: string };
  /** How long Envoy may take to load `bootstrapFile` before it listens; LARGE_START_BOUND_MS unless set (the bench's largest configurations take longer on a busy machine). */
  readonly envoyStartBoundMs?: number;
  /** Once the hook exited, replay each distinct GET it made straight to Envoy's admin API and measure what one costs Envoy (../../support/real-envoy/read-cost.ts). */
  readonly replayReads?: boolean;
  /** Envoy drains immediately over 60 s whatever the peer (Envoy Gateway's pods always do). */
  readonly drainImmediately?: boolean;
  /** Once the manager listens (connect polled every 1 ms), let it settle, then measure its CPU and memory while idle. */
  readonly managerIdle?: { readonly settleMs: number; readonly idleMs: number };
  /** Run the hook under bash, whose `times` gives the CPU it used. */
  readonly hookCpu?: boolean;
  /** Where the ready file must appear (the peer's path, or the one its flags name). */
  readonly readyFile: string;
  /** The manager's port and the path Envoy's preStop httpGet calls. */
  readonly managerPort: number;
  readonly readyPath: string;
}

export interface HttpSeen {
  readonly status: number;
  readonly body: string;
  /** Milliseconds after the hook started (or after the request was sent, without a hook). */
  readonly atMs: number;
}

export interface PodObservation {
  readonly healthz: { readonly ipv4: HttpSeen | string; readonly ipv6: HttpSeen | string } | undefined;
  readonly ready: HttpSeen | string | undefined;
  readonly hook:
    | { readonly exitCode: number | null; readonly atMs: number; readonly stdout: string; readonly stderr: string; readonly cpuMs?: number }
    | undefined;
  readonly readyFileExists: boolean;
  readonly idleClosedAtMs: number | undefined;
  /** Admin calls the hook made, in order, with their time after the hook started. */
  readonly adminCalls: ReadonlyArray<{ readonly method: string; readonly path: string; readonly query: string; readonly atMs: number }>;
  readonly managerExit: { readonly code: number | null; readonly signal: string | null; readonly stdout: string; readonly stderr: string } | undefined;
  /** Milliseconds from Envoy's start until it listened (its configuration loaded). */
  readonly envoyStartMs: number;
  /** The idle pool's connections (HTTP/1.1, then HTTP/2): still open when the hook exited? */
  readonly idlePoolOpenAtHookExit: readonly boolean[] | undefined;
  /** The scraper's requests while the hook ran: sent, and each answer's status (0: failed). */
  readonly scraped: { readonly sent: number; readonly statuses: readonly number[] } | undefined;
  /** With `managerIdle`: start → listening, and the idle manager's CPU (all threads) and RssAnon. */
  readonly managerIdle?: { readonly listeningMs: number; readonly cpuMs: number; readonly rssAnonKiB: number };
  /** With `replayReads`: Envoy's cost per GET the hook made, weighted by how often it sent each. */
  readonly readCost?: ReadCost;
}

const BOUND_MS = 120_000;
/** How long a process may take to listen, on a busy machine. */
const START_BOUND_MS = 20_000;
/** How long Envoy may take to load a scenario's own bootstrap (thousands of filter chains) before it listens. */
const LARGE_START_BOUND_MS = 60_000;

export async function runPod(scenario: PodScenario): Promise<PodObservation> {
  const eg = scenario.peer === 'envoy-gateway';
  const adminHost = scenario.adminHost ?? '127.0.0.1';
  if (scenario.bootstrapFile !== undefined) copyFileSync(scenario.bootstrapFile, '/tmp/envoy.json');
  else writeFileSync('/tmp/envoy.json', JSON.stringify(eg ? egBootstrap(adminHost) : contourBootstrap()));
  const backend = scenario.backendPort === undefined ? undefined : await startBackend(scenario.backendPort);
  const envoyStartedAt = Date.now();
  const envoy = spawn(
    scenario.envoyBinary,
    [
      '--config-path',
      '/tmp/envoy.json',
      '--disable-hot-restart',
      '--concurrency',
      '1',
      '--log-level',
      'warning',
      ...(eg || scenario.drainImmediately === true ? ['--drain-strategy', 'immediate', '--drain-time-s', '60'] : []),
    ],
    { stdio: 'ignore' },
  );
  const realAdmin = eg ? `${adminHost === '::1' ? '[::1]' : '127.0.0.1'}:${EG_REAL_ADMIN_PORT}` : `unix:${CONTOUR_REAL_ADMIN_SOCKET}`;
  const tapAt = eg ? `${adminHost === '::1' ? '[::1]' : '127.0.0.1'}:19000` : 'unix:/admin/admin.sock';
  const children: ChildProcess[] = [envoy];
  try {
    // A large configuration takes Envoy seconds of CPU to load: on a busy machine, many more.
    const listening = () => portOpen(eg ? 10080 : 8080);
    await (scenario.bootstrapFile === undefined
      ? pollUntil('envoy listening', listening, { timeoutMs: START_BOUND_MS })
      : pollUntil('envoy listening', listening, { timeoutMs: scenario.envoyStartBoundMs ?? LARGE_START_BOUND_MS, everyMs: 50 }));
    const envoyStartMs = Date.now() - envoyStartedAt;
    const tap = scenario.adminUnreachable === true ? undefined : await startAdminTap(realAdmin, tapAt);
    const managerStart = performance.now();
    const manager = scenario.manager === undefined ? undefined : exec(scenario.manager, children);
    let healthz: PodObservation['healthz'];
    let managerIdle: PodObservation['managerIdle'];
    if (manager !== undefined) {
      await pollUntil('manager listening', () => portOpen(scenario.managerPort), {
        timeoutMs: START_BOUND_MS,
        everyMs: scenario.managerIdle === undefined ? 20 : 1,
      });
      const listeningMs = performance.now() - managerStart;
      const now = Date.now();
      healthz = { ipv4: await httpGet('127.0.0.1', scenario.managerPort, '/healthz', now), ipv6: await httpGet('::1', scenario.managerPort, '/healthz', now) };
      if (scenario.managerIdle !== undefined) managerIdle = { listeningMs, ...(await idleCost(manager.child.pid ?? 0, scenario.managerIdle)) };
    }
    const idle = await Promise.all((scenario.idleOn ?? []).map((port) => idleConnection(port, port !== 8443 /* the TCP proxy: a connection, no HTTP */)));
    const pool: Connection[] = scenario.idlePoolOn === undefined ? [] : [await idleHttp1(scenario.idlePoolOn), await idleHttp2(scenario.idlePoolOn)];
    const startedAt = Date.now();
    const scraper = scenario.scrape === undefined ? undefined : startScraper(scenario.scrape.port, scenario.scrape.path);
    const ready = manager === undefined ? undefined : httpGet('127.0.0.1', scenario.managerPort, scenario.readyPath, startedAt);
    // bash reports the CPU its waited-for child used (getrusage) through `times`.
    const hookArgv =
      scenario.hookCpu === true && scenario.hook !== undefined ? ['bash', '-c', '"$@"; rc=$?; times >&2; exit $rc', 'hook', ...scenario.hook] : scenario.hook;
    const hook = hookArgv === undefined ? undefined : exec(hookArgv, children, scenario.hookEnv);
    let idleClosedAtMs: number | undefined;
    const closeAt = scenario.closeIdleAfterMs;
    idle.forEach((socket, index) => {
      const atMs = typeof closeAt === 'number' ? closeAt : closeAt?.[index];
      if (atMs === undefined) return;
      setTimeout(() => {
        idleClosedAtMs = Date.now() - startedAt;
        socket.destroy();
      }, atMs);
    });
    const hookDone = hook === undefined ? undefined : await bounded(hook.exited, 'hook exit', BOUND_MS);
    const idlePoolOpenAtHookExit = scenario.idlePoolOn === undefined ? undefined : pool.map((connection) => !connection.closed());
    const scraped = await scraper?.stop();
    const hookSeen =
      hook === undefined || hookDone === undefined
        ? undefined
        : {
            exitCode: hookDone.code,
            atMs: hookDone.at - startedAt,
            stdout: hook.stdout(),
            stderr: hook.stderr(),
            ...(scenario.hookCpu === true ? { cpuMs: timesCpuMs(hook.stderr()) } : {}),
          };
    const readySeen = ready === undefined ? undefined : await bounded(ready, 'ready answer', BOUND_MS);
    const readyFileExists = existsSync(scenario.readyFile);
    let managerExit: PodObservation['managerExit'];
    if (manager !== undefined) {
      manager.child.kill('SIGTERM');
      const done = await bounded(manager.exited, 'manager exit', BOUND_MS);
      managerExit = { code: done.code, signal: done.signal, stdout: manager.stdout(), stderr: manager.stderr() };
    }
    for (const socket of idle) socket.destroy();
    await Promise.all(pool.map((connection) => connection.close()));
    await tap?.close();
    const adminCalls = (tap?.calls ?? [])
      .filter((call) => call.time >= startedAt)
      .map((call) => ({ method: call.method, path: call.path, query: call.query, atMs: call.time - startedAt }));
    // Nothing else asks Envoy for anything now: the scraper stopped, every client connection is closed.
    const readCost = scenario.replayReads === true ? await replayCost(envoy.pid as number, realAdmin, adminCalls) : undefined;
    return {
      healthz,
      ready: readySeen,
      hook: hookSeen,
      readyFileExists,
      idleClosedAtMs,
      adminCalls,
      managerExit,
      envoyStartMs,
      idlePoolOpenAtHookExit,
      scraped,
      ...(managerIdle === undefined ? {} : { managerIdle }),
      ...(readCost === undefined ? {} : { readCost }),
    };
  } finally {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    backend?.close();
  }
}

/**
 * The idle cost of a process once it settled: CPU of all its threads from schedstat (finer than
 * /proc/<pid>/stat's ticks; a Go runtime works on threads of its own), RssAnon at the end.
 */
async function idleCost(pid: number, window: { settleMs: number; idleMs: number }): Promise<{ cpuMs: number; rssAnonKiB: number }> {
  const cpuNs = (): number =>
    readdirSync(`/proc/${pid}/task`).reduce((total, task) => total + Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, 'utf8').split(' ')[0]), 0);
  // Measurement windows, not waits for an event: start-up transients end, then idle time passes.
  await sleep(window.settleMs);
  const before = cpuNs();
  await sleep(window.idleMs);
  const cpuMs = (cpuNs() - before) / 1e6;
  return { cpuMs, rssAnonKiB: Number(/RssAnon:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) };
}

/** The user + system CPU of bash's `times` (its children's line, the last), in ms. */
function timesCpuMs(stderr: string): number {
  const line = stderr.trim().split('\n').at(-1) ?? '';
  const [user, system] = [...line.matchAll(/(\d+)m([\d.]+)s/g)].map((m) => (Number(m[1]) * 60 + Number(m[2])) * 1_000);
  return (user ?? Number.NaN) + (system ?? Number.NaN);
}

/** A keep-alive connection that had one request answered (none when `http` is false), then stays open and silent. */
function idleConnection(port: number, http = true): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('error', reject);
    socket.once('connect', () => {
      if (!http) return resolve(socket);
      socket.write('GET / HTTP/1.1\r\nhost: pod\r\n\r\n');
      socket.once('data', () => resolve(socket));
    });
  });
}

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

function startBackend(port: number): Promise<{ close(): void }> {
  const server = createServer((req, res) => {
    req.resume();
    res.end('ok\n');
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve({ close: () => server.close() }));
  });
}

/** A keep-alive GET every 100 ms, one at a time, until stopped (at most 300); stop() waits for the one in flight. */
function startScraper(port: number, path: string): { stop(): Promise<{ sent: number; statuses: number[] }> } {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const statuses: number[] = [];
  let stopped = false;
  const one = (): Promise<number> =>
    new Promise((resolve) => {
      const req = request({ host: '127.0.0.1', port, path, agent }, (res) => {
        res
          .resume()
          .on('end', () => resolve(res.statusCode ?? 0))
          .on('error', () => resolve(0));
      });
      req.on('error', () => resolve(0));
      req.end();
    });
  const loop = (async () => {
    while (!stopped && statuses.length < 300) {
      statuses.push(await one());
      await sleep(100);
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
      agent.destroy();
      return { sent: statuses.length, statuses };
    },
  };
}

interface Running {
  readonly child: ChildProcess;
  readonly exited: Promise<{ code: number | null; signal: string | null; at: number }>;
  stdout(): string;
  stderr(): string;
}

/** Execs argv as a container runtime does: argv[0] looked up on PATH (/esm-bin) unless absolute. */
function exec(argv: readonly string[], children: ChildProcess[], env: Readonly<Record<string, string>> = {}): Running {
  const [file, ...args] = argv as [string, ...string[]];
  const child = spawn(file, args, { env: { ...env, PATH: '/esm-bin:/usr/bin' }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let out = '';
  let err = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
  const exited = new Promise<{ code: number | null; signal: string | null; at: number }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal, at: Date.now() })),
  );
  return { child, exited, stdout: () => out, stderr: () => err };
}

function httpGet(host: string, port: number, path: string, since: number): Promise<HttpSeen | string> {
  return new Promise((resolve) => {
    const req = request({ host, port, path, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, atMs: Date.now() - since }));
    });
    req.on('error', (error) => resolve(`error: ${error.message}`));
    req.end();
  });
}
