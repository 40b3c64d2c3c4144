// The cloud load balancer in front of the pods. It only decides where NEW connections go: an
// existing connection stays on its pod until the server ends it, as with a real L4/L7 LB.

export interface Endpoint {
  readonly host: string;
  readonly port: number;
}

export type Pod = 'terminating' | 'healthy';

export class LoadBalancer {
  private deprogrammedAt: number | undefined;

  constructor(
    private readonly endpoints: Readonly<Record<Pod, Endpoint>>,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Kubernetes marked the pod terminating; the LB keeps sending it new connections for
   * `deprogrammingDelayMs` more. A pod is marked terminating once, so later calls change nothing.
   */
  terminationStarted(deprogrammingDelayMs: number): void {
    if (!Number.isFinite(deprogrammingDelayMs) || deprogrammingDelayMs < 0) {
      throw new TypeError(`deprogrammingDelayMs must be a finite number >= 0, got ${deprogrammingDelayMs}`);
    }
    this.deprogrammedAt ??= this.now() + deprogrammingDelayMs;
  }

  /** When the LB stops sending new connections to the terminating pod, once termination started. */
  get deprogrammedAtMs(): number | undefined {
    return this.deprogrammedAt;
  }

  /**
   * Where the next new connection goes. No fair split before termination: the pod under test
   * must carry all the load, or a broken drain could hide behind the healthy pod.
   */
  connectTarget(): Pod {
    return this.deprogrammedAt !== undefined && this.now() >= this.deprogrammedAt ? 'healthy' : 'terminating';
  }

  endpoint(pod: Pod): Endpoint {
    return this.endpoints[pod];
  }
}
