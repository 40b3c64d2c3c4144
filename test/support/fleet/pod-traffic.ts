// Which pod served the application's requests, from when each arrived and which balancer slot sent
// it (HAProxy names the slot in a header): a slot belongs to an old pod until it exited, and to a
// new pod from when it was ready (in place, a new pod takes over the slot of an exited one).
import { slotName } from './haproxy-config.js';
import type { RolloutEvent } from './rollout.js';

export interface PodTraffic {
  /** Requests the application received through this pod. */
  readonly served: number;
  /** Old pods: those received while it terminated, from kubelet's start of its hooks to Envoy's hook return (or its exit). */
  readonly whileTerminating: number | undefined;
}

export interface TrafficTimeline {
  /** Date.now() when the rollout began: event times count from it. */
  readonly startedAt: number;
  readonly events: readonly RolloutEvent[];
  readonly slots: Readonly<Record<string, number>>;
}

export function podTraffic(timeline: TrafficTimeline, arrivals: ReadonlyMap<string, readonly number[]>): Record<string, PodTraffic> {
  const at = (pod: string, kind: RolloutEvent['kind']): number | undefined => timeline.events.find((e) => e.pod === pod && e.kind === kind)?.t;
  const count = (slot: number, from: number, to: number): number =>
    (arrivals.get(slotName(slot)) ?? []).filter((arrival) => arrival - timeline.startedAt >= from && arrival - timeline.startedAt <= to).length;
  return Object.fromEntries(
    Object.entries(timeline.slots).map(([pod, slot]) => {
      const deleted = at(pod, 'deleted') !== undefined;
      const exited = at(pod, 'exited') ?? Infinity;
      const from = deleted ? -Infinity : (at(pod, 'ready') ?? Infinity);
      const terminating = at(pod, 'terminating');
      const whileTerminating = terminating === undefined ? undefined : count(slot, terminating, at(pod, 'envoy-hook-returned') ?? exited);
      return [pod, { served: count(slot, from, exited), whileTerminating }];
    }),
  );
}
