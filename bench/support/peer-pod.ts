// One manager + hook pair (ours, or a peer's real binary) beside real Envoy, run inside the
// sandbox of test/support/sandbox.ts (own loopback, /tmp and /admin: the peers' ports and paths are
// fixed). Measures the manager's start and idle cost, then one drain: idle keep-alive connections
// closed one by one while the hook runs, Envoy's preStop GET held by the manager. The admin API
// sits behind a recording tap (one extra loopback hop for everyone alike).
import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { CONTOUR_REAL_ADMIN_SOCKET, contourBootstrap, EG_REAL_ADMIN_PORT, egBootstrap } from '../../test/support/peer-fixtures/pod-bootstraps.js';
import { bounded, idleConnection, portOpen, until } from '../../test/support/pod-probes.js';
import { startAdminTap } from '../../test/support/real-envoy/admin-tap.js';

export interface PeerRun {
  /** Which pod shape (bootstrap, admin address, user port) the pair expects. */
  readonly shape: 'envoy-gateway' | 'contour';
  readonly envoyBinary: string;
  readonly manager: readonly string[];
  readonly hook: readonly string[];
  readonly managerPort: number;
  readonly readyPath: string;
  /** Between the manager listening and the idle measurement: start-up transients are not idle cost. */
  readonly settleMs: number;
  readonly idleMs: number;
  /** One idle keep-alive connection per entry, closed this long after the hook started. */
  readonly closeAtMs: readonly number[];
}

export interface PeerFigures {
  readonly listeningMs: number;
  readonly idleCpuMs: number;
  readonly idleRssAnonKiB: number;
  readonly firstAdminMs: number;
  readonly hookCpuMs: number;
  readonly adminRequests: number;
  /** Last connection closed → Envoy's preStop GET answered. */
  readonly releaseMs: number;
  /** Hook started → Envoy's preStop GET answered. */
  readonly terminationMs: number;
  readonly readyStatus: number;
  readonly hookExit: number | null;
}

const BOUND_MS = 60_000;

export async function runPeerPod(run: PeerRun): Promise<PeerFigures> {
  const eg = run.shape === 'envoy-gateway';
  writeFileSync('/tmp/envoy.json', JSON.stringify(eg ? egBootstrap('127.0.0.1') : contourBootstrap()));
  const envoy = spawn(
    run.envoyBinary,
    [
      '--config-path',
      '/tmp/envoy.json',
      '--disable-hot-restart',
      '--concurrency',
      '1',
      '--log-level',
      'warning',
      '--drain-strategy',
      'immediate',
      '--drain-time-s',
      '60',
    ],
    { stdio: 'ignore' },
  );
  const children: ChildProcess[] = [envoy];
  const userPort = eg ? 10080 : 8080;
  try {
    await until(() => portOpen(userPort), 'envoy listening', 20);
    const tap = await startAdminTap(
      eg ? `127.0.0.1:${EG_REAL_ADMIN_PORT}` : `unix:${CONTOUR_REAL_ADMIN_SOCKET}`,
      eg ? '127.0.0.1:19000' : 'unix:/admin/admin.sock',
    );

    const managerStart = performance.now();
    const manager = start(run.manager, children);
    await until(() => portOpen(run.managerPort), 'manager listening', 1);
    const listeningMs = performance.now() - managerStart;
    await sleep(run.settleMs);
    const cpuBefore = cpuNs(manager.pid);
    await sleep(run.idleMs);
    const idleCpuMs = (cpuNs(manager.pid) - cpuBefore) / 1e6;
    const idleRssAnonKiB = Number(/RssAnon:\s+(\d+)/.exec(readFileSync(`/proc/${manager.pid}/status`, 'utf8'))?.[1]);

    const idle = await Promise.all(run.closeAtMs.map(() => idleConnection(userPort)));
    const hookStart = Date.now();
    const ready = httpGet(run.managerPort, run.readyPath);
    // bash reports the CPU its waited-for child used (getrusage, microseconds) through `times`.
    const hook = start(['bash', '-c', '"$@"; rc=$?; times >&2; exit $rc', 'hook', ...run.hook], children);
    let lastCloseAt = 0;
    run.closeAtMs.forEach((atMs, index) => {
      setTimeout(() => {
        idle[index]?.destroy();
        lastCloseAt = Math.max(lastCloseAt, Date.now());
      }, atMs);
    });
    const answer = await bounded(ready, 'ready answer', BOUND_MS);
    const hookExit = await bounded(hook.exited, 'hook exit', BOUND_MS);
    const times = hook.stderr().trim().split('\n').at(-1) ?? '';
    const [user, system] = [...times.matchAll(/(\d+)m([\d.]+)s/g)].map((m) => (Number(m[1]) * 60 + Number(m[2])) * 1_000);
    const calls = tap.calls.filter((call) => call.time >= hookStart);
    await tap.close();
    return {
      listeningMs,
      idleCpuMs,
      idleRssAnonKiB,
      firstAdminMs: (calls[0]?.time ?? Number.NaN) - hookStart,
      hookCpuMs: (user ?? Number.NaN) + (system ?? Number.NaN),
      adminRequests: calls.length,
      releaseMs: answer.at - lastCloseAt,
      terminationMs: answer.at - hookStart,
      readyStatus: answer.status,
      hookExit,
    };
  } finally {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
}

/**
 * CPU time all the process's threads have used, in nanoseconds (schedstat: finer than
 * /proc/<pid>/stat's ticks; per thread, and a Go runtime works on threads of its own).
 */
function cpuNs(pid: number): number {
  let total = 0;
  for (const task of readdirSync(`/proc/${pid}/task`)) total += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, 'utf8').split(' ')[0]);
  return total;
}

function start(argv: readonly string[], children: ChildProcess[]): { pid: number; exited: Promise<number | null>; stderr(): string } {
  const [file, ...args] = argv as [string, ...string[]];
  const child = spawn(file, args, { env: { PATH: '/usr/bin:/bin' }, stdio: ['ignore', 'ignore', 'pipe'] });
  children.push(child);
  let err = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (err = (err + chunk).slice(-4_096)));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { pid: child.pid ?? 0, exited, stderr: () => err };
}

function httpGet(port: number, path: string): Promise<{ status: number; at: number }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, at: Date.now() }));
    });
    req.on('error', reject);
    req.end();
  });
}
