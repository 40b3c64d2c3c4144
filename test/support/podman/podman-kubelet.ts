// kubelet's termination of a pod, played on a podman pod by the rules of a 1.33 kubelet
// (../../support/kubelet/rules.ts names the kubelet function of each): every running container,
// native sidecars included, is killed at once; its preStop hook (exec through `podman exec`, with
// the container's environment; httpGet to the target kubelet picks, from the node, here the host)
// is waited for at most the grace period; a native sidecar then waits for every regular container
// and the sidecar declared after it; then `podman stop -t <what is left, at least 2 s>`: SIGTERM,
// SIGKILL when that runs out. A failed hook is a FailedPreStopHook event and SIGTERM follows.
import { type PreStopHook, runHook as runHttpGet } from '../kubelet/hooks.js';
import { effectiveGraceSeconds, FAILED_PRESTOP_HOOK, killContainer, killPod } from '../kubelet/rules.js';
import { within } from '../poll.js';
import type { PodContainer, PodmanPod } from './podman-pod.js';
import { podman, podmanRun } from './podman-run.js';

interface ContainerTermination {
  readonly name: string;
  /** The podman container, kept (stopped) until the test removes it: its log can still be read. */
  readonly id: string;
  /** `exec exit 0`, `httpGet 200`, `httpGet error ECONNRESET`, `cut at the grace period` (kubelet stopped waiting), or `none`. */
  readonly hook: string;
  /** Milliseconds from the start of termination. */
  readonly hookEndedMs: number | undefined;
  /** Events kubelet recorded for this container (`FailedPreStopHook: PreStopHook failed`). */
  readonly events: readonly string[];
  readonly sigtermMs: number;
  readonly exitedMs: number;
  readonly exitCode: number;
}

export interface PodTermination {
  readonly startedAt: number;
  readonly containers: Readonly<Record<string, ContainerTermination>>;
}

const CUT = 'cut at the grace period';

/** Terminates the pod; `hooks: false` is a pod without preStop hooks (SIGTERM to every container at once). */
export async function terminatePod(pod: PodmanPod, options: { hooks: boolean }): Promise<PodTermination> {
  const startedAt = Date.now();
  const since = (): number => Date.now() - startedAt;
  const graceS = effectiveGraceSeconds(pod.terminationGracePeriodSeconds);
  const hooksLeft = new Set<AbortController>();

  const terminate = async (c: PodContainer, turn: Promise<unknown> | undefined): Promise<ContainerTermination> => {
    let hook = 'none';
    let hookEndedMs: number | undefined;
    const events: string[] = [];
    const times = { sigtermMs: 0, exitedMs: 0 };
    const spec = c.preStop;
    const preStop = async (preStop: PreStopHook): Promise<void> => {
      const abort = new AbortController();
      hooksLeft.add(abort);
      const ended = runHook(c, preStop, pod, abort.signal, graceS).then((result) => {
        if (!result.ok) events.push(FAILED_PRESTOP_HOOK);
        return result.detail;
      });
      hook = (await within(ended, graceS * 1_000)) ? await ended : CUT;
      hookEndedMs = since();
    };
    await killContainer(graceS, {
      ...(options.hooks && spec !== undefined ? { preStop: () => preStop(spec) } : {}),
      ...(turn === undefined ? {} : { turn }),
      stop: async (seconds) => {
        times.sigtermMs = since();
        await podman(['stop', '--time', String(seconds), c.id], (seconds + 30) * 1000);
        times.exitedMs = since();
      },
    });
    const exitCode = Number((await podman(['inspect', '--format', '{{.State.ExitCode}}', c.id])).trim());
    return { name: c.name, id: c.id, hook, hookEndedMs, events, ...times, exitCode };
  };
  const all = [...pod.containers, ...pod.sidecars];
  const results = await killPod(
    pod.containers.map((c) => c.name),
    pod.sidecars.map((c) => c.name),
    (name, turn) => terminate(all.find((c) => c.name === name) ?? pod.container(name), turn),
  );
  // kubelet never cancels an httpGet hook; the pod is gone, so the test stops what is left.
  for (const abort of hooksLeft) abort.abort();
  return { startedAt, containers: Object.fromEntries(results.map((result) => [result.name, result])) };
}

async function runHook(c: PodContainer, hook: PreStopHook, pod: PodmanPod, signal: AbortSignal, graceS: number): Promise<{ ok: boolean; detail: string }> {
  if ('exec' in hook) {
    // The hook's exit code is podman exec's; its output is discarded, as kubelet discards it. It ends with its container at the latest.
    const result = await podmanRun(['exec', c.id, ...hook.exec.command], (graceS + 60) * 1_000);
    return { ok: result.code === 0, detail: `exec exit ${result.code}` };
  }
  const running = runHttpGet(hook, {}, { name: pod.name, hostNetwork: pod.hostNetwork });
  signal.addEventListener('abort', () => running.kill(), { once: true });
  const result = await running.done;
  return { ok: result.ok, detail: `httpGet ${result.detail.replace(/^HTTP /, '')}` };
}
