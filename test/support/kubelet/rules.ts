// kubelet v1.33's rules for terminating a pod, each named after the kubelet function it follows
// (module k8s.io/kubernetes v1.33.13): pure functions, and the two that sequence a termination
// (killPod, killContainer), which take the runtime's actions as callbacks. Both kubelet stand-ins,
// the process one (pod.ts) and the podman one, take their decisions here, so they cannot drift apart.
import { within } from '../poll.js';

/** `minimumGracePeriodInSeconds` (kuberuntime/kuberuntime_manager.go): StopContainer never gets less. */
const MINIMUM_GRACE_PERIOD_S = 2;

/**
 * Where the stand-ins' pods live: every pod's ports are on this machine's loopback, so the pod IP a
 * runtime reports and the node's own IP are both 127.0.0.1 here.
 */
const POD_IP = '127.0.0.1';
const NODE_IP = '127.0.0.1';

export interface PodNetwork {
  readonly hostNetwork: boolean;
}

/** The pod a hook belongs to: its network, and its name for kubelet's messages. */
export interface HookPod extends PodNetwork {
  readonly name: string;
}

/** `executePreStopHook`'s event when `runner.Run` returns an error; the error itself only reaches kubelet's log. */
export const FAILED_PRESTOP_HOOK = 'FailedPreStopHook: PreStopHook failed';

/**
 * `runHTTPHandler` (lifecycle/handlers.go): a hook that names a host dials it, from the node's
 * network namespace; one that names none dials the first IP the runtime reports for the pod
 * sandbox (`determinePodSandboxIPs`, kuberuntime/kuberuntime_sandbox.go), and a host-network
 * sandbox has none ("runtime is not responsible for the IP"), so the hook fails before any dial.
 */
export function hookTarget(host: string | undefined, pod: HookPod): { readonly host: string } | { readonly error: string } {
  if (host !== undefined && host !== '') {
    // The node's loopback is not a pod-network pod's; here both are this machine's, so the
    // stand-in would reach the pod where kubelet reaches the node. Refuse rather than pass wrongly.
    if (!pod.hostNetwork && isLoopback(host))
      throw new Error(`${pod.name}: a hook host of ${host} on a pod-network pod dials the node, not the pod; the stand-in cannot tell the two apart`);
    return { host };
  }
  if (pod.hostNetwork)
    return {
      error: `failed to find networking container: &{${pod.name} [] [&PodSandboxStatus{Network:&PodSandboxNetworkStatus{Ip:,AdditionalIps:[]*PodIP{},},}]}`,
    };
  return { host: POD_IP };
}

/** `runProbe` (prober/prober.go): a probe without a host dials the pod's status IP, the node's for a host-network pod (`generateAPIPodStatus`). */
export function probeHost(host: string | undefined, pod: PodNetwork): string {
  if (host !== undefined && host !== '') return host;
  return pod.hostNetwork ? NODE_IP : POD_IP;
}

/** `executePreStopHook` and `waitForTurn` hand back the time waited, truncated to whole seconds (`int64(…Seconds())`). */
function wholeSeconds(ms: number): number {
  return Math.trunc(ms / 1_000);
}

/**
 * `killContainer` (kuberuntime/kuberuntime_container.go): what is left of the grace period once a
 * wait took `waitedMs`: first the preStop hook's (at most the whole grace period), then, for a
 * native sidecar, its turn (at most what the hook left); each in whole seconds.
 */
function graceLeft(graceS: number, waitedMs: number): number {
  return graceS - wholeSeconds(waitedMs);
}

/** `killContainer`: StopContainer's timeout, what the waits left but never under the minimum. The runtime sends SIGTERM, then SIGKILL when it has passed. */
function stopTimeoutSeconds(graceLeftS: number): number {
  return Math.max(graceLeftS, MINIMUM_GRACE_PERIOD_S);
}

/**
 * The pod worker's `calculateEffectiveGracePeriod` (pod_workers.go): whole seconds, and never
 * under 1. The stand-ins take the pod's terminationGracePeriodSeconds as it is, so it must be one.
 */
export function effectiveGraceSeconds(terminationGracePeriodSeconds: number): number {
  if (!Number.isInteger(terminationGracePeriodSeconds) || terminationGracePeriodSeconds < 0) {
    throw new Error(`terminationGracePeriodSeconds must be a whole number of seconds, not ${terminationGracePeriodSeconds}`);
  }
  return Math.max(terminationGracePeriodSeconds, 1);
}

/**
 * `newTerminationOrdering` (kuberuntime/kuberuntime_termination_order.go), for pods with a native
 * sidecar: each sidecar waits for every regular container, then for the sidecar declared after it,
 * so sidecars stop last, in reverse order. Regular containers wait for nothing.
 */
function terminationPrerequisites(regular: readonly string[], sidecars: readonly string[]): ReadonlyMap<string, readonly string[]> {
  const prerequisites = new Map<string, readonly string[]>(regular.map((name) => [name, []]));
  sidecars.forEach((name, index) => {
    const later = sidecars[index + 1];
    prerequisites.set(name, later === undefined ? regular : [...regular, later]);
  });
  return prerequisites;
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127\./.test(host);
}

/**
 * `killContainersWithSyncResult` (kuberuntime/kuberuntime_container.go): every container is killed
 * at once, each on its own clock; with native sidecars, each waits its turn
 * (`terminationPrerequisites`), and `kill` gets the turn to wait for (undefined without sidecars).
 * Resolves with what each kill resolved with, regular containers first, each in pod order.
 */
export async function killPod<T>(
  regular: readonly string[],
  sidecars: readonly string[],
  kill: (name: string, turn: Promise<unknown> | undefined) => Promise<T>,
): Promise<T[]> {
  const prerequisites = sidecars.length === 0 ? undefined : terminationPrerequisites(regular, sidecars);
  const stopped = new Map<string, Promise<T>>();
  // Every container's promise is registered before any kill starts: a sidecar's turn waits on the others'.
  for (const name of [...regular, ...sidecars]) {
    const killed = Promise.resolve().then(() => {
      const turn = prerequisites?.get(name)?.map((before) => stopped.get(before));
      return kill(name, turn === undefined ? undefined : Promise.all(turn));
    });
    stopped.set(name, killed);
  }
  return Promise.all(stopped.values());
}

/**
 * `killContainer`: the preStop hook (when the container has one), which `preStop` waits for at
 * most the grace period; then the turn, waited for at most what is left; then StopContainer with
 * the rest, never under the minimum (`stopTimeoutSeconds`).
 */
export async function killContainer(
  graceS: number,
  steps: { readonly preStop?: () => Promise<unknown>; readonly turn?: Promise<unknown>; readonly stop: (timeoutS: number) => Promise<unknown> },
): Promise<void> {
  let left = graceS;
  if (steps.preStop !== undefined) {
    const started = Date.now();
    await steps.preStop();
    left = graceLeft(left, Date.now() - started);
  }
  if (steps.turn !== undefined && left > 0) {
    const waiting = Date.now();
    await within(steps.turn, left * 1_000);
    left = graceLeft(left, Date.now() - waiting);
  }
  await steps.stop(stopTimeoutSeconds(left));
}
