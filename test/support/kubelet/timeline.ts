// What happened during a pod's termination, in order, with times relative to its start (the
// deletion timestamp), so tests and the demo can read the sequence the way kubelet lived it.

export type TimelineEventKind =
  | 'pod-terminating'
  | 'prestop-start'
  | 'prestop-end'
  | 'sigterm'
  | 'container-exit'
  /** kubelet stopped waiting for a hook at the grace period; the hook goes on. */
  | 'prestop-timeout'
  /** An event kubelet records on the pod: `Reason: message`. */
  | 'event'
  | 'sigkill'
  | 'container-restart'
  | 'pod-gone';

export interface TimelineEvent {
  readonly kind: TimelineEventKind;
  /** Milliseconds since the timeline began. */
  readonly t: number;
  /** Date.now() of the event, to line it up with logs and traffic records. */
  readonly at: number;
  readonly container?: string;
  readonly detail?: string;
}

export class Timeline {
  readonly events: TimelineEvent[] = [];
  readonly startedAt = Date.now();

  record(kind: TimelineEventKind, container?: string, detail?: string): TimelineEvent {
    const at = Date.now();
    const event: TimelineEvent = {
      kind,
      t: at - this.startedAt,
      at,
      ...(container === undefined ? {} : { container }),
      ...(detail === undefined ? {} : { detail }),
    };
    this.events.push(event);
    return event;
  }

  /** The first event of this kind (for this container), or undefined. */
  find(kind: TimelineEventKind, container?: string): TimelineEvent | undefined {
    return this.events.find((e) => e.kind === kind && (container === undefined || e.container === container));
  }

  /** `   12 ms  prestop-start      shutdown-manager  exec envoy-shutdown-manager shutdown` */
  format(): string {
    return this.events
      .map((e) => `${String(e.t).padStart(7)} ms  ${e.kind.padEnd(17)} ${(e.container ?? '').padEnd(17)} ${e.detail ?? ''}`.trimEnd())
      .join('\n');
  }
}
