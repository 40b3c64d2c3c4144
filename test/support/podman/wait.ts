// Waiting on what containers show from outside (a log line, an HTTP answer, a state), on the
// shared poll.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { pollFor } from '../poll.js';
import { request } from '../protocols/clients.js';
import { podman, podmanEnv, podmanRun } from './podman-run.js';

/** Polls `probe`; an error it throws counts as not yet (podman may fail while a container starts), and is named at the deadline. */
export function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 15_000): Promise<T> {
  let last: unknown;
  const tolerant = (): Promise<T | undefined> =>
    probe().catch((error: unknown) => {
      last = error;
      return undefined;
    });
  return pollFor(what, tolerant, { timeoutMs, everyMs: 25, lastSeen: () => (last === undefined ? undefined : `last error: ${(last as Error).message}`) });
}

/**
 * How long a container may take to answer its probe: a deadline, not a speed. A busy machine has
 * taken over 15 s to start a pod's container (podman, runc, conmon, the executable itself); the
 * deadline still comes before the test's own 60 s timeout, so its error names the container.
 */
const STARTED_WITHIN_MS = 40_000;

/**
 * How often a probe that fails also asks podman whether the container exited: kubelet learns of an
 * exit from its runtime's relist, once a second. Asking at every failed probe would cost a podman
 * process each time, on a busy machine hundreds of milliseconds that slow the probe itself.
 */
const STATE_EVERY_MS = 1_000;

/** Waits until the server on 127.0.0.1:`port` answers `path` with 200; if `container` exited, the error at the deadline carries its log. */
export async function waitForHttp(container: string, port: number, path: string, timeoutMs = STARTED_WITHIN_MS): Promise<void> {
  let stateAt = Date.now();
  await waitFor(
    `${container} answering ${path} on 127.0.0.1:${port}`,
    async () => {
      const answer = await request({ port }, path).catch(() => undefined);
      if (answer?.status === 200) return true;
      if (Date.now() - stateAt < STATE_EVERY_MS) return undefined;
      stateAt = Date.now();
      const state = (await podman(['inspect', '--format', '{{.State.Status}}', container])).trim();
      if (state === 'exited') throw new Error(`${container} exited:\n${await logs(container)}`);
      return undefined;
    },
    timeoutMs,
  );
}

/** The container's log as `podman logs` (and `kubectl logs`) shows it: stdout and stderr. */
export async function logs(container: string): Promise<string> {
  const result = await podmanRun(['logs', container]);
  return `${result.stdout}${result.stderr}`;
}

/**
 * Resolves once the container's log (followed, as `kubectl logs -f`: one podman process, no
 * polling) has shown `text`; rejects when `signal` aborts or the log ends first.
 */
export async function untilLogged(container: string, text: string, signal: AbortSignal): Promise<void> {
  const env = await podmanEnv();
  return new Promise((resolve, reject) => {
    const child = spawn('podman', ['logs', '--follow', container], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let tail = '';
    let settled = false;
    const settle = (error?: Error): void => {
      if (settled) return;
      settled = true;
      signal.removeEventListener('abort', abort);
      child.kill('SIGKILL');
      if (error === undefined) resolve();
      else reject(error);
    };
    const abort = (): void => settle(new Error(`stopped waiting for "${text}" in ${container}'s log`));
    // Only the tail a split line could start in is kept.
    const look = (chunk: string): void => {
      tail = (tail + chunk).slice(-(chunk.length + text.length));
      if (tail.includes(text)) settle();
    };
    child.stdout.setEncoding('utf8').on('data', look);
    child.stderr.setEncoding('utf8').on('data', look);
    child.once('error', (error) => settle(error));
    child.once('close', () => settle(new Error(`${container}'s log ended without "${text}"`)));
    if (signal.aborted) abort();
    else signal.addEventListener('abort', abort, { once: true });
  });
}

/** The container's log lines that parse as JSON (the manager logs JSON). */
export async function jsonLines(container: string): Promise<Array<Record<string, unknown>>> {
  return (await logs(container)).split('\n').flatMap((line) => {
    try {
      const parsed: unknown = JSON.parse(line);
      return typeof parsed === 'object' && parsed !== null ? [parsed as Record<string, unknown>] : [];
    } catch {
      return [];
    }
  });
}

/** The host-side PID of the container's main process, and its real UID and GID from /proc. */
export async function mainProcessIds(container: string): Promise<{ uid: number; gid: number; capEff: string }> {
  const pid = (await podman(['inspect', '--format', '{{.State.Pid}}', container])).trim();
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name: string): string => new RegExp(`^${name}:\\s*(.*)$`, 'm').exec(status)?.[1] ?? '';
  return { uid: Number(field('Uid').split(/\s+/)[0]), gid: Number(field('Gid').split(/\s+/)[0]), capEff: field('CapEff') };
}
