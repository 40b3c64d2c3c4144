// Waiting on what containers show from outside (a log line, an HTTP answer, a state): each wait
// polls a condition until it holds, bounded by a deadline that names what never happened.
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { request } from '../../support/http.js';
import { podman, podmanRun } from './podman-run.js';

export async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms${last === undefined ? '' : ` (last error: ${(last as Error).message})`}`);
    await sleep(25);
  }
}

/** Waits until the server on 127.0.0.1:`port` answers `path` with 200; fails at once if `container` exits. */
export async function waitForHttp(container: string, port: number, path: string): Promise<void> {
  await waitFor(`${container} answering ${path} on 127.0.0.1:${port}`, async () => {
    const answer = await request({ port }, path).catch(() => undefined);
    if (answer?.status === 200) return true;
    const state = (await podman(['inspect', '--format', '{{.State.Status}}', container])).trim();
    if (state === 'exited') throw new Error(`${container} exited:\n${await logs(container)}`);
    return undefined;
  });
}

/** The container's log as `podman logs` (and `kubectl logs`) shows it: stdout and stderr. */
export async function logs(container: string): Promise<string> {
  const result = await podmanRun(['logs', container]);
  return `${result.stdout}${result.stderr}`;
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
