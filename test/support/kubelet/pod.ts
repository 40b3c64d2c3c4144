// A pod run the way kubelet v1.33 runs one (rules.ts holds each rule and the kubelet function it
// comes from): containers are processes; on termination every running container, native sidecars
// included, is killed at once, each on its own clock: its preStop hook, waited for at most the grace
// period; a native sidecar then waits its turn (every regular container, then the sidecar declared
// after it); SIGTERM, and SIGKILL once what is left of the grace period (at least 2 s) has passed.
// A hook that fails is a FailedPreStopHook event, and SIGTERM follows all the same.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pollUntil, within } from '../poll.js';
import { Container, type ContainerCommand, type ContainerExit } from './container.js';
import { describeHook, type HttpGetAction, type PreStopHook, type RunningHook, runHook, runProbe } from './hooks.js';
import { effectiveGraceSeconds, FAILED_PRESTOP_HOOK, killContainer, killPod } from './rules.js';
import { Timeline } from './timeline.js';

export interface ContainerSpec extends ContainerCommand {
  /** An init container that must run to completion (exit 0) before the next container starts. */
  readonly runToCompletion?: boolean;
  /** Resolves once the container is ready; the pod starts the next container only then. */
  readonly ready?: (container: Container) => Promise<unknown>;
  /** An httpGet readiness or startup probe: the pod starts the next container once it passes (after `ready`, if both). */
  readonly probe?: HttpGetAction & { readonly timeoutSeconds: number };
  /** A function is evaluated when the hook runs, so it can use ports learned at start-up. */
  readonly preStop?: PreStopHook | ((pod: Pod) => PreStopHook);
}

export interface PodSpec {
  /** For kubelet's messages. */
  readonly name?: string;
  /**
   * Started in order before `containers`. Those with `runToCompletion` must exit 0 first (classic
   * init containers); the others are native sidecars (restartPolicy Always): kept running, and
   * stopped after every regular container, in reverse order.
   */
  readonly initContainers?: readonly ContainerSpec[];
  readonly containers: readonly ContainerSpec[];
  /** Whole seconds, as in the API. */
  readonly terminationGracePeriodSeconds: number;
  /** The pod is in the node's network namespace: its sandbox has no IP of its own. */
  readonly hostNetwork?: boolean;
  /** Every container's environment, before its own `env`. */
  readonly env?: Readonly<Record<string, string>>;
}

/** What kubelet injects into every container; its presence tells a process it runs in Kubernetes. */
const KUBERNETES_ENV = { KUBERNETES_SERVICE_HOST: '10.96.0.1', KUBERNETES_SERVICE_PORT: '443' };
/** Between two runs of a probe the pod waits on; the stand-in does not model periodSeconds. */
const PROBE_EVERY_MS = 50;
const PROBE_BOUND_MS = 20_000;

export class Pod {
  readonly logDir = mkdtempSync(join(tmpdir(), 'pod-'));
  /** Events while the pod runs (restarts); replaced by a fresh one when termination begins. */
  timeline = new Timeline();
  readonly #spec: PodSpec;
  readonly #containers = new Map<string, Container>();
  readonly #hooks = new Set<RunningHook>();

  private constructor(spec: PodSpec) {
    this.#spec = spec;
  }

  static async start(spec: PodSpec): Promise<Pod> {
    const pod = new Pod(spec);
    try {
      for (const container of [...(spec.initContainers ?? []), ...spec.containers]) await pod.#startContainer(container);
    } catch (error) {
      await pod.destroy();
      throw error;
    }
    return pod;
  }

  container(name: string): Container {
    const container = this.#containers.get(name);
    if (container === undefined) throw new Error(`no container named ${name}`);
    return container;
  }

  /** Deletes the pod and resolves when every container has exited. */
  async terminate(): Promise<Timeline> {
    // Times count from the deletion; each container's clock starts with its kill, here the same moment.
    this.timeline = new Timeline();
    const timeline = this.timeline;
    timeline.record('pod-terminating');
    for (const container of this.#containers.values()) {
      if (container.running) void container.exited.then((exit) => timeline.record('container-exit', container.name, describeExit(exit)));
    }
    const graceS = effectiveGraceSeconds(this.#spec.terminationGracePeriodSeconds);
    const sidecars = (this.#spec.initContainers ?? []).filter((c) => c.runToCompletion !== true);
    await killPod(
      this.#spec.containers.map((c) => c.name),
      sidecars.map((c) => c.name),
      async (name, turn) => {
        // A container that is not running counts as terminated already, as in newTerminationOrdering.
        if (this.container(name).running) await this.#kill(this.#specOf(name), graceS, turn);
      },
    );
    timeline.record('pod-gone');
    // kubelet never cancels an httpGet hook; the pod is gone, so the test stops it.
    for (const hook of this.#hooks) hook.kill();
    this.#hooks.clear();
    return timeline;
  }

  /**
   * What a failed liveness probe does: this container's preStop hook runs and the container is
   * stopped and started again. No other container is touched, and no pod termination begins.
   */
  async restartContainer(name: string): Promise<void> {
    const spec = this.#specOf(name);
    // No grace override and no termination ordering: killContainer with the pod's grace period.
    await this.#kill(spec, effectiveGraceSeconds(this.#spec.terminationGracePeriodSeconds), undefined);
    this.timeline.record('container-restart', name, 'liveness probe failed');
    await this.#startContainer(spec);
  }

  /** Test cleanup: kills whatever still runs and removes the log directory. */
  async destroy(): Promise<void> {
    for (const hook of this.#hooks) hook.kill();
    for (const container of this.#containers.values()) container.signal('SIGKILL');
    await Promise.all([...this.#containers.values()].map((c) => c.exited));
    rmSync(this.logDir, { recursive: true, force: true });
  }

  #specOf(name: string): ContainerSpec {
    const spec = [...(this.#spec.initContainers ?? []), ...this.#spec.containers].find((c) => c.name === name);
    if (spec === undefined) throw new Error(`no container named ${name}`);
    return spec;
  }

  async #startContainer(spec: ContainerSpec): Promise<void> {
    const container = new Container(spec, this.logDir, { PATH: process.env.PATH ?? '/usr/bin:/bin', ...KUBERNETES_ENV, ...this.#spec.env });
    this.#containers.set(spec.name, container);
    if (spec.runToCompletion === true) {
      const exit = await container.exited;
      if (exit.code !== 0)
        throw new Error(`init container ${spec.name} failed (${exit.code ?? exit.signal}): ${container.stderr}${JSON.stringify(container.lines)}`);
      return;
    }
    await spec.ready?.(container);
    if (spec.probe !== undefined) await this.#untilProbePasses(spec.name, spec.probe);
  }

  async #untilProbePasses(name: string, probe: NonNullable<ContainerSpec['probe']>): Promise<void> {
    await pollUntil(`${name}: its probe ${probe.host ?? ''}:${probe.port}${probe.path} passes`, () => runProbe(probe, this.#network), {
      timeoutMs: PROBE_BOUND_MS,
      everyMs: PROBE_EVERY_MS,
    });
  }

  get #network(): { name: string; hostNetwork: boolean } {
    return { name: this.#spec.name ?? 'pod', hostNetwork: this.#spec.hostNetwork === true };
  }

  /** `killContainer` (rules.ts) on this container: its hook, its turn, then StopContainer. */
  async #kill(spec: ContainerSpec, graceS: number, turn: Promise<unknown> | undefined): Promise<void> {
    const container = this.container(spec.name);
    let hookEnded: Promise<void> | undefined;
    const preStop = async (): Promise<void> => {
      hookEnded = (await this.#preStop(spec, container, graceS)).ended;
    };
    await killContainer(graceS, {
      ...(spec.preStop !== undefined && container.running ? { preStop } : {}),
      ...(turn === undefined ? {} : { turn }),
      stop: (timeoutS) => this.#stopContainer(container, timeoutS),
    });
    await hookEnded;
  }

  /**
   * `executePreStopHook`: runs the hook, waited for at most the grace period. A failure, however
   * late, is an event. `ended`: an exec hook's end, which comes with its container's at the latest.
   */
  async #preStop(spec: ContainerSpec, container: Container, graceS: number): Promise<{ ended: Promise<void> | undefined }> {
    const hook = typeof spec.preStop === 'function' ? spec.preStop(this) : (spec.preStop as PreStopHook);
    const timeline = this.timeline;
    timeline.record('prestop-start', spec.name, describeHook(hook));
    const running = runHook(hook, container.env, this.#network);
    this.#hooks.add(running);
    // An exec hook is a process inside the container: it ends with it.
    if ('exec' in hook) void container.exited.then(() => running.kill());
    const ended = running.done.then((result) => {
      if (!this.#hooks.delete(running)) return;
      timeline.record('prestop-end', spec.name, result.detail);
      if (!result.ok) timeline.record('event', spec.name, FAILED_PRESTOP_HOOK);
    });
    if (!(await within(ended, graceS * 1_000)))
      timeline.record('prestop-timeout', spec.name, `still running after the ${graceS} s grace period: kubelet stops waiting`);
    return { ended: 'exec' in hook ? ended : undefined };
  }

  /** StopContainer: SIGTERM, and SIGKILL if the container is still running `timeoutS` later. */
  async #stopContainer(container: Container, timeoutS: number): Promise<void> {
    if (!container.running) return;
    this.timeline.record('sigterm', container.name);
    container.signal('SIGTERM');
    if (!(await within(container.exited, timeoutS * 1_000)) && container.running) {
      this.timeline.record('sigkill', container.name);
      container.signal('SIGKILL');
    }
    await container.exited;
  }
}

function describeExit(exit: ContainerExit): string {
  return exit.signal === null ? `exit ${exit.code}` : `killed by ${exit.signal}`;
}
