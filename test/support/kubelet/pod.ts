// A pod run the way kubelet runs one: containers as
// processes; on termination every regular container's preStop hook starts at once, each container
// gets SIGTERM when its own hook returns, and SIGKILL comes at terminationGracePeriodSeconds (with a
// one-time 2 s extension while a hook still runs). Native sidecars (init containers with
// restartPolicy Always) start first and are stopped only after every regular container has exited.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Container, type ContainerCommand, type ContainerExit } from './container.js';
import { describeHook, runHook, type PreStopHook, type RunningHook } from './hooks.js';
import { Timeline } from './timeline.js';

export interface ContainerSpec extends ContainerCommand {
  /** An init container that must run to completion (exit 0) before the next container starts. */
  readonly runToCompletion?: boolean;
  /** Resolves once the container is ready; the pod starts the next container only then. */
  readonly ready?: (container: Container) => Promise<unknown>;
  /** A function is evaluated when the hook runs, so it can use ports learned at start-up. */
  readonly preStop?: PreStopHook | ((pod: Pod) => PreStopHook);
}

export interface PodSpec {
  /**
   * Started in order before `containers`. Those with `runToCompletion` must exit 0 first (classic
   * init containers); the others are native sidecars (restartPolicy Always): kept running, and
   * stopped after every regular container, in reverse order.
   */
  readonly initContainers?: readonly ContainerSpec[];
  readonly containers: readonly ContainerSpec[];
  /** May be fractional in tests. */
  readonly terminationGracePeriodSeconds: number;
  /** Every container's environment, before its own `env`. */
  readonly env?: Readonly<Record<string, string>>;
}

/** kubelet's one-time extension when a hook is still running at the end of the grace period. */
export const GRACE_EXTENSION_MS = 2_000;
/** What kubelet injects into every container; its presence tells a process it runs in Kubernetes. */
const KUBERNETES_ENV = { KUBERNETES_SERVICE_HOST: '10.96.0.1', KUBERNETES_SERVICE_PORT: '443' };

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
    // Times count from the deletion timestamp, and so does the grace period.
    const timeline = (this.timeline = new Timeline());
    timeline.record('pod-terminating');
    for (const container of this.#containers.values()) {
      if (container.running) void container.exited.then((exit) => timeline.record('container-exit', container.name, describeExit(exit)));
    }
    const graceEnds = timeline.startedAt + this.#spec.terminationGracePeriodSeconds * 1_000;
    const stopped = new AbortController();
    const enforcer = this.#enforceGracePeriod(graceEnds, stopped.signal);

    await Promise.all(this.#spec.containers.map((spec) => this.#stop(spec)));
    for (const spec of [...(this.#spec.initContainers ?? [])].reverse()) {
      if (spec.runToCompletion !== true) await this.#stop(spec);
    }
    stopped.abort();
    await enforcer;
    timeline.record('pod-gone');
    return timeline;
  }

  /**
   * What a failed liveness probe does: this container's preStop hook runs and the container is
   * stopped and started again. No other container is touched, and no pod termination begins.
   */
  async restartContainer(name: string): Promise<void> {
    const spec = [...(this.#spec.initContainers ?? []), ...this.#spec.containers].find((c) => c.name === name);
    if (spec === undefined) throw new Error(`no container named ${name}`);
    await this.#stop(spec, this.#spec.terminationGracePeriodSeconds * 1_000);
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

  async #startContainer(spec: ContainerSpec): Promise<void> {
    const container = new Container(spec, this.logDir, { PATH: process.env['PATH'] ?? '/usr/bin:/bin', ...KUBERNETES_ENV, ...this.#spec.env });
    this.#containers.set(spec.name, container);
    if (spec.runToCompletion === true) {
      const exit = await container.exited;
      if (exit.code !== 0) throw new Error(`init container ${spec.name} failed (${exit.code ?? exit.signal}): ${container.stderr}${JSON.stringify(container.lines)}`);
      return;
    }
    await spec.ready?.(container);
  }

  /** preStop (if any), then SIGTERM once it returns, whatever its result; resolves on exit. */
  async #stop(spec: ContainerSpec, killAfterMs?: number): Promise<void> {
    const container = this.container(spec.name);
    const killer = killAfterMs === undefined ? undefined : setTimeout(() => container.signal('SIGKILL'), killAfterMs);
    if (spec.preStop !== undefined && container.running) {
      const hook = typeof spec.preStop === 'function' ? spec.preStop(this) : spec.preStop;
      this.timeline.record('prestop-start', spec.name, describeHook(hook));
      const running = runHook(hook, container.env);
      this.#hooks.add(running);
      const result = await running.done;
      this.#hooks.delete(running);
      this.timeline.record('prestop-end', spec.name, result.detail);
    }
    if (container.running) {
      this.timeline.record('sigterm', spec.name);
      container.signal('SIGTERM');
    }
    await container.exited;
    clearTimeout(killer);
  }

  async #enforceGracePeriod(graceEnds: number, stopped: AbortSignal): Promise<void> {
    try {
      await sleepUntil(graceEnds, stopped);
      this.timeline.record('grace-period-end');
      if (this.#hooks.size > 0) {
        this.timeline.record('grace-extension', undefined, `${GRACE_EXTENSION_MS} ms: a preStop hook is still running`);
        await sleepUntil(graceEnds + GRACE_EXTENSION_MS, stopped);
      }
    } catch {
      return; // every container exited in time
    }
    for (const hook of this.#hooks) hook.kill();
    for (const container of this.#containers.values()) {
      if (!container.running) continue;
      this.timeline.record('sigkill', container.name);
      container.signal('SIGKILL');
    }
  }
}

/** Sleeps until Date.now() reaches `at`: a timer may fire up to 1 ms early on that clock, kubelet's grace period never ends early. */
async function sleepUntil(at: number, signal: AbortSignal): Promise<void> {
  while (Date.now() < at) await sleep(at - Date.now(), undefined, { signal });
}

function describeExit(exit: ContainerExit): string {
  return exit.signal === null ? `exit ${exit.code}` : `killed by ${exit.signal}`;
}
