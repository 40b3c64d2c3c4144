// The rollout driver: the Deployment controller (rollout-plan.ts decides), the scheduler's one rule
// that matters here (with hostNetwork a new pod takes the node ports of an old one, so it starts only
// once that pod has exited), the DaemonSet controller's own rule without surge (a node's new pod is
// created only once its old pod is gone, so it too starts after an exit), the EndpointSlice
// following balancer (the pod out of HAProxy `lagMs` after it is marked terminating) and kubelet
// (podman-kubelet.ts terminates each deleted pod as a 1.33 kubelet does). A new pod counts as
// available once its readiness probe passes; it is put in the balancer then.
import type { PodTermination } from '../podman/podman-kubelet.js';
import type { PodmanPod } from '../podman/podman-pod.js';
import { nextStep, type Strategy } from './rollout-plan.js';

export interface FleetPod {
  readonly name: string;
  readonly slot: number;
  readonly pod: PodmanPod;
}

export interface RolloutHooks {
  /** Starts a pod in `slot` and resolves once it is ready (its readiness probe passed). */
  startPod(name: string, slot: number): Promise<FleetPod>;
  /** Puts a ready pod in the balancer. */
  admit(pod: FleetPod): Promise<void>;
  /** Takes a pod out of the balancer (an EndpointSlice follower's reaction; after `lagMs`). */
  remove(pod: FleetPod): Promise<void>;
  /** Terminates the pod as kubelet does; resolves once every container exited. */
  terminate(pod: FleetPod): Promise<PodTermination>;
  /** Just before an old pod is deleted (e.g. to put long requests in flight). */
  beforeDelete(pod: FleetPod): Promise<void>;
}

export interface RolloutOptions {
  readonly replicas: number;
  readonly strategy: Strategy;
  /** New pods take the slot (node ports) of a deleted pod, once it has exited. */
  readonly inPlace: boolean;
  /**
   * New pods start only once a deleted pod has exited, each on a slot of its own: a DaemonSet
   * without surge, whose controller counts a terminating pod as its node's pod until it is gone.
   */
  readonly afterExit?: boolean;
  /** The balancer takes a terminating pod out after this long; undefined: it never does (health checks decide). */
  readonly removeLagMs: number | undefined;
  /** Bounds the whole rollout. */
  readonly timeoutMs: number;
}

/**
 * `scheduled`: a new pod placed on its node ports (in place, once the old pod holding them exited);
 * `terminating`: kubelet starts the deleted pod's preStop hooks.
 */
type RolloutEventKind = 'created' | 'scheduled' | 'ready' | 'deleted' | 'terminating' | 'balancer-removed' | 'envoy-hook-returned' | 'exited';

export interface RolloutEvent {
  /** Milliseconds since the rollout began. */
  readonly t: number;
  readonly pod: string;
  readonly kind: RolloutEventKind;
}

interface PodDrain {
  readonly pod: string;
  /** From deletion to the return of Envoy's preStop hook (the drain), when it had one. */
  readonly hookMs: number | undefined;
  /** From deletion to the exit of the last container. */
  readonly exitMs: number;
  /** How long the pod outlived its Envoy: from Envoy's exit to the last container's (the manager's stay for its final scrape). */
  readonly afterEnvoyMs: number;
  readonly exitCodes: Readonly<Record<string, number>>;
  /** Date.now() when Envoy's container got SIGTERM. */
  readonly envoySigtermAt: number;
  /** How Envoy's preStop hook ended (`httpGet 200`, `cut at the grace period`, `none`). */
  readonly envoyHook: string;
}

export interface RolloutReport {
  /** Date.now() when the rollout began: events count from it. */
  readonly startedAt: number;
  readonly durationMs: number;
  readonly events: readonly RolloutEvent[];
  readonly drains: readonly PodDrain[];
  /** Each pod's server slot, old and new. */
  readonly slots: Readonly<Record<string, number>>;
  readonly pods: readonly FleetPod[];
}

/** Replaces every pod of `initial` by a new one, as the Deployment controller does. */
export async function rollout(initial: readonly FleetPod[], hooks: RolloutHooks, options: RolloutOptions): Promise<RolloutReport> {
  const startedAt = Date.now();
  const events: RolloutEvent[] = [];
  const record = (pod: string, kind: RolloutEventKind): void => {
    events.push({ t: Date.now() - startedAt, pod, kind });
  };
  const old = [...initial];
  const fresh: Array<{ name: string; pod: FleetPod | undefined }> = [];
  const all: FleetPod[] = [...initial];
  const drains: PodDrain[] = [];
  const work = new Set<Promise<void>>();
  const failures: unknown[] = [];
  let changed: () => void = () => {};
  let change = new Promise<void>((resolve) => (changed = resolve));
  const notify = (): void => {
    changed();
    change = new Promise<void>((resolve) => (changed = resolve));
  };
  const track = (task: Promise<void>): void => {
    const tracked = task
      .catch((error: unknown) => void failures.push(error))
      .finally(() => {
        work.delete(tracked);
        notify();
      });
    work.add(tracked);
  };
  // Slots: new ones after the initial pods' (surge), or those deleted pods free when they exit (in place).
  let nextSlot = Math.max(-1, ...initial.map((p) => p.slot)) + 1;
  const freed: Array<Promise<number>> = [];

  const remove = (pod: FleetPod): Promise<void> => {
    const deletedAt = Date.now();
    record(pod.name, 'deleted');
    const exited = (async () => {
      await hooks.beforeDelete(pod);
      const lag = options.removeLagMs;
      const out =
        lag === undefined
          ? Promise.resolve()
          : delay(lag)
              .then(() => hooks.remove(pod))
              .then(() => record(pod.name, 'balancer-removed'));
      const termination = await hooks.terminate(pod);
      events.push({ t: termination.startedAt - startedAt, pod: pod.name, kind: 'terminating' });
      const envoy = termination.containers.envoy;
      if (envoy?.hookEndedMs !== undefined && envoy.hook !== 'none')
        events.push({ t: termination.startedAt + envoy.hookEndedMs - startedAt, pod: pod.name, kind: 'envoy-hook-returned' });
      record(pod.name, 'exited');
      await out;
      // The endpoint is gone with the pod, whichever balancer.
      if (lag === undefined) await hooks.remove(pod);
      const containers = Object.values(termination.containers);
      drains.push({
        pod: pod.name,
        hookMs: envoy?.hook === 'none' ? undefined : envoy?.hookEndedMs,
        exitMs: Date.now() - deletedAt,
        afterEnvoyMs: Math.max(...containers.map((c) => c.exitedMs)) - (envoy?.exitedMs ?? Number.NaN),
        exitCodes: Object.fromEntries(containers.map((c) => [c.name, c.exitCode])),
        envoySigtermAt: termination.startedAt + (envoy?.sigtermMs ?? Number.NaN),
        envoyHook: envoy?.hook ?? 'none',
      });
      return pod.slot;
    })();
    if (options.inPlace || options.afterExit === true) freed.push(exited);
    return exited.then(() => undefined);
  };

  const create = (index: number): Promise<void> => {
    const name = `new-${index}`;
    const entry: { name: string; pod: FleetPod | undefined } = { name, pod: undefined };
    fresh.push(entry);
    record(name, 'created');
    return (async () => {
      // In place: the scheduler holds the pod until the deleted pod whose ports it takes has exited;
      // after an exit: the DaemonSet controller creates it only then.
      const waited =
        options.inPlace || options.afterExit === true ? await (freed.shift() ?? Promise.reject(new Error(`${name}: no deleted pod exits for it`))) : undefined;
      const slot = options.inPlace && waited !== undefined ? waited : nextSlot++;
      record(name, 'scheduled');
      const pod = await hooks.startPod(name, slot);
      all.push(pod);
      await hooks.admit(pod);
      entry.pod = pod;
      record(name, 'ready');
    })();
  };

  const deadline = startedAt + options.timeoutMs;
  let created = 0;
  for (;;) {
    if (failures.length > 0) break;
    const step = nextStep(
      {
        replicas: options.replicas,
        old: { total: old.length, ready: old.length },
        fresh: { total: fresh.length, ready: fresh.filter((f) => f.pod !== undefined).length },
      },
      options.strategy,
    );
    if (step.done) break;
    for (let i = 0; i < step.delete; i += 1) {
      const pod = old.shift();
      if (pod !== undefined) track(remove(pod));
    }
    for (let i = 0; i < step.create; i += 1) track(create(created++));
    if (step.create > 0 || step.delete > 0) continue;
    if (work.size === 0) throw new Error(`the rollout is stuck: ${JSON.stringify(step)} with nothing under way`);
    const left = deadline - Date.now();
    if (left <= 0 || (await Promise.race([change.then(() => true), delay(left).then(() => false)])) === false) {
      throw new Error(`the rollout did not finish within ${options.timeoutMs} ms: ${JSON.stringify(events)}`);
    }
  }
  await Promise.all(work);
  if (failures.length > 0) throw failures[0] instanceof Error ? failures[0] : new Error(String(failures[0]));
  const slots = Object.fromEntries(all.map((p) => [p.name, p.slot]));
  return { startedAt, durationMs: Date.now() - startedAt, events: events.sort((a, b) => a.t - b.t), drains, slots, pods: all };
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
