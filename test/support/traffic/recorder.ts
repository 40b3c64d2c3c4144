// Counts what the clients saw: successes and connections per pod, and every failure in order.
import type { FailureKind, Protocol } from '../protocols/failures.js';
import type { Pod } from './load-balancer.js';

export interface Failure {
  readonly at: number;
  readonly protocol: Protocol;
  readonly pod: Pod;
  readonly kind: FailureKind;
  readonly detail: string;
}

export interface TrafficStats {
  /** Successful requests per pod. */
  readonly requests: { readonly terminating: number; readonly healthy: number };
  /** Connections opened (TCP connect succeeded) per pod. */
  readonly connections: { readonly terminating: number; readonly healthy: number };
  readonly failures: readonly Failure[];
  /** Date.now() of the last successful response from the terminating pod. */
  readonly lastRequestToTerminatingAt: number | undefined;
}

export class TrafficRecorder {
  private readonly requests: Record<Pod, number> = { terminating: 0, healthy: 0 };
  private readonly connections: Record<Pod, number> = { terminating: 0, healthy: 0 };
  private readonly failures: Failure[] = [];
  private lastToTerminating: number | undefined;

  succeeded(pod: Pod, at = Date.now()): void {
    this.requests[pod] += 1;
    if (pod === 'terminating') this.lastToTerminating = at;
  }

  connected(pod: Pod): void {
    this.connections[pod] += 1;
  }

  failed(failure: Omit<Failure, 'at'>, at = Date.now()): void {
    this.failures.push({ at, ...failure });
  }

  /** A copy: later traffic never changes a snapshot already taken. */
  snapshot(): TrafficStats {
    return {
      requests: { ...this.requests },
      connections: { ...this.connections },
      failures: [...this.failures],
      lastRequestToTerminatingAt: this.lastToTerminating,
    };
  }
}
