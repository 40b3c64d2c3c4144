// kubelet's termination of a pod, played on a podman pod the way a real 1.33 kubelet did it to
// this chart's pod: every regular container's preStop hook starts at once (exec through `podman
// exec`, with the container's environment; httpGet from the node, here the host); each container
// gets SIGTERM (`podman stop -t <grace left>`, SIGKILL when that runs out) right after ITS OWN hook
// returns, whatever the hook's result, never while the hook still runs. A hook still running at
// the grace period is cut and its container killed 2 s later (kubelet's one-time extension).
// Native sidecars go last, once every regular container has exited.
import { request } from 'node:http';
import type { Hook, PodContainer, PodmanPod } from './podman-pod.js';
import { podman, podmanRun } from './podman-run.js';

/** kubelet's one-time extension for a hook still running when the grace period ends. */
const HOOK_EXTENSION_S = 2;

export interface ContainerTermination {
  readonly name: string;
  /** The podman container, kept (stopped) until the test removes it: its log can still be read. */
  readonly id: string;
  /** `exec exit 0`, `httpGet 200`, `httpGet error ECONNRESET`, `cut at the grace period`, or `none`. */
  readonly hook: string;
  /** Milliseconds from the start of termination. */
  readonly hookEndedMs: number | undefined;
  readonly sigtermMs: number;
  readonly exitedMs: number;
  readonly exitCode: number;
}

export interface PodTermination {
  readonly startedAt: number;
  readonly containers: Readonly<Record<string, ContainerTermination>>;
}

/**
 * Terminates the pod; `hooks: false` is a pod without preStop hooks (SIGTERM to every container at
 * once). Native sidecars are stopped after every regular container has exited, in reverse order
 * (their own hooks first), with the grace period that is left.
 */
export async function terminatePod(pod: PodmanPod, options: { hooks: boolean }): Promise<PodTermination> {
  const startedAt = Date.now();
  const since = (): number => Date.now() - startedAt;
  const graceMs = pod.terminationGracePeriodSeconds * 1000;
  const terminate = async (c: PodContainer): Promise<ContainerTermination> => {
    let hook = 'none';
    let hookEndedMs: number | undefined;
    let cut = false;
    if (options.hooks && c.preStop !== undefined) {
      const abort = new AbortController();
      let timer: NodeJS.Timeout | undefined;
      // A timer may fire up to 1 ms early on Date.now()'s clock: look again until the grace period is really over.
      const graceEnds = new Promise<string>((resolve) => {
        const check = (): void => {
          if (since() >= graceMs) resolve('cut at the grace period');
          else timer = setTimeout(check, graceMs - since());
        };
        check();
      });
      hook = await Promise.race([runHook(c, c.preStop, abort.signal, graceMs), graceEnds]);
      clearTimeout(timer);
      cut = hook === 'cut at the grace period';
      if (cut) abort.abort();
      hookEndedMs = since();
    }
    const seconds = cut ? HOOK_EXTENSION_S : Math.max(0, Math.ceil((graceMs - since()) / 1000));
    const sigtermMs = since();
    await podman(['stop', '--time', String(seconds), c.id], (seconds + 30) * 1000);
    const exitedMs = since();
    const exitCode = Number((await podman(['inspect', '--format', '{{.State.ExitCode}}', c.id])).trim());
    return { name: c.name, id: c.id, hook, hookEndedMs, sigtermMs, exitedMs, exitCode };
  };
  const results = await Promise.all(pod.containers.map(terminate));
  for (const sidecar of [...pod.sidecars].reverse()) results.push(await terminate(sidecar));
  return { startedAt, containers: Object.fromEntries(results.map((result) => [result.name, result])) };
}

function runHook(c: PodContainer, hook: Hook, signal: AbortSignal, graceMs: number): Promise<string> {
  if ('exec' in hook) {
    // The hook's exit code is podman exec's; its output is discarded, as kubelet discards it.
    return podmanRun(['exec', c.id, ...hook.exec], graceMs + 10_000).then((result) => `exec exit ${result.code}`);
  }
  const { port, path, headers } = hook.httpGet;
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path, headers, agent: false, signal }, (res) => {
      res.resume();
      res.on('end', () => resolve(`httpGet ${res.statusCode}`));
      res.on('error', (error: NodeJS.ErrnoException) => resolve(`httpGet error ${error.code ?? error.message}`));
    });
    // Any status, or a broken connection, ends the hook.
    req.on('error', (error: NodeJS.ErrnoException) => resolve(`httpGet error ${error.code ?? error.message}`));
    req.end();
  });
}
