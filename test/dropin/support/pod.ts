// One generated pod's termination, run inside the sandbox (its own loopback, /tmp and /admin):
// real Envoy from a peer-shaped bootstrap, the manager and the preStop hook exec'd by the argv the
// peer's controller renders, Envoy's httpGet preStop, then SIGTERM to the manager. Everything
// seen is returned for the test to judge; nothing is decided here.
import { type ChildProcess, spawn } from 'node:child_process';
import { copyFileSync, existsSync, writeFileSync } from 'node:fs';
import { Agent, createServer, request } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { CONTOUR_REAL_ADMIN_SOCKET, contourBootstrap, EG_REAL_ADMIN_PORT, egBootstrap } from '../../support/peer-fixtures/pod-bootstraps.js';
import { bounded, idleConnection, portOpen, until } from '../../support/pod-probes.js';
import { pollUntil } from '../../support/poll.js';
import { startAdminTap } from '../../support/real-envoy/admin-tap.js';
import { type ReadCost, replayCost } from '../../support/real-envoy/read-cost.js';
import { type IdleConnection, idleHttp1, idleHttp2 } from '../../support/traffic/side-clients.js';

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
  /** Close every idle connection this long after the hook started; undefined: keep them. */
  readonly closeIdleAfterMs?: number;
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
  readonly hook: { readonly exitCode: number | null; readonly atMs: number; readonly stdout: string; readonly stderr: string } | undefined;
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
  /** With `replayReads`: Envoy's cost per GET the hook made, weighted by how often it sent each. */
  readonly readCost?: ReadCost;
}

const BOUND_MS = 120_000;
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
      ...(eg ? ['--drain-strategy', 'immediate', '--drain-time-s', '60'] : []),
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
      ? until(listening, 'envoy listening')
      : pollUntil('envoy listening', listening, { timeoutMs: scenario.envoyStartBoundMs ?? LARGE_START_BOUND_MS, everyMs: 50 }));
    const envoyStartMs = Date.now() - envoyStartedAt;
    const tap = scenario.adminUnreachable === true ? undefined : await startAdminTap(realAdmin, tapAt);
    const manager = scenario.manager === undefined ? undefined : exec(scenario.manager, children);
    let healthz: PodObservation['healthz'];
    if (manager !== undefined) {
      await until(() => portOpen(scenario.managerPort), 'manager listening');
      const now = Date.now();
      healthz = { ipv4: await httpGet('127.0.0.1', scenario.managerPort, '/healthz', now), ipv6: await httpGet('::1', scenario.managerPort, '/healthz', now) };
    }
    const idle = await Promise.all((scenario.idleOn ?? []).map((port) => idleConnection(port, port !== 8443 /* the TCP proxy: a connection, no HTTP */)));
    const pool: IdleConnection[] = scenario.idlePoolOn === undefined ? [] : [await idleHttp1(scenario.idlePoolOn), await idleHttp2(scenario.idlePoolOn)];
    const startedAt = Date.now();
    const scraper = scenario.scrape === undefined ? undefined : startScraper(scenario.scrape.port, scenario.scrape.path);
    const ready = manager === undefined ? undefined : httpGet('127.0.0.1', scenario.managerPort, scenario.readyPath, startedAt);
    const hook = scenario.hook === undefined ? undefined : exec(scenario.hook, children, scenario.hookEnv);
    let idleClosedAtMs: number | undefined;
    if (scenario.closeIdleAfterMs !== undefined) {
      void sleep(scenario.closeIdleAfterMs).then(() => {
        idleClosedAtMs = Date.now() - startedAt;
        for (const socket of idle) socket.destroy();
      });
    }
    const hookDone = hook === undefined ? undefined : await bounded(hook.exited, 'hook exit', BOUND_MS);
    const idlePoolOpenAtHookExit = scenario.idlePoolOn === undefined ? undefined : pool.map((connection) => !connection.closed());
    const scraped = await scraper?.stop();
    const hookSeen =
      hook === undefined || hookDone === undefined
        ? undefined
        : { exitCode: hookDone.code, atMs: hookDone.at - startedAt, stdout: hook.stdout(), stderr: hook.stderr() };
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
      ...(readCost === undefined ? {} : { readCost }),
    };
  } finally {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    backend?.close();
  }
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
