// The core/v1 Event object for a drain, as kubelet writes its own on a pod. Pure.
import type { DrainEvent } from './drain-event.js';
import type { PodRef } from './in-cluster.js';

/** The Event's source and reporting component: what `kubectl get events` shows as FROM. */
const EVENT_COMPONENT = 'envoy-shutdown-manager';

export interface KubeEvent {
  readonly apiVersion: 'v1';
  readonly kind: 'Event';
  readonly metadata: { readonly name: string; readonly namespace: string };
  readonly involvedObject: { readonly apiVersion: 'v1'; readonly kind: 'Pod'; readonly name: string; readonly namespace: string; readonly uid: string };
  readonly type: DrainEvent['type'];
  readonly reason: DrainEvent['reason'];
  readonly message: string;
  readonly count: 1;
  readonly firstTimestamp: string;
  readonly lastTimestamp: string;
  readonly source: { readonly component: string; readonly host?: string };
  readonly reportingComponent: string;
  readonly reportingInstance: string;
}

/** `unique`: a suffix no other Event of this pod has (kubelet uses the time in hex; so do we, plus randomness). */
export function kubeEvent(pod: PodRef, event: DrainEvent, at: Date, unique: string): KubeEvent {
  // Seconds precision: the v1 Event's timestamps are RFC 3339 without fractions.
  const timestamp = `${at.toISOString().slice(0, 19)}Z`;
  return {
    apiVersion: 'v1',
    kind: 'Event',
    // A name is at most 253 characters: the pod's (up to 253) is cut to leave room for the suffix.
    metadata: { name: `${pod.name.slice(0, 252 - unique.length).replace(/[.-]+$/, '')}.${unique}`, namespace: pod.namespace },
    involvedObject: { apiVersion: 'v1', kind: 'Pod', name: pod.name, namespace: pod.namespace, uid: pod.uid },
    type: event.type,
    reason: event.reason,
    message: event.message,
    count: 1,
    firstTimestamp: timestamp,
    lastTimestamp: timestamp,
    source: { component: EVENT_COMPONENT, ...(pod.nodeName === undefined ? {} : { host: pod.nodeName }) },
    reportingComponent: EVENT_COMPONENT,
    // At most 128 characters; kubelet puts its node's name here.
    reportingInstance: (pod.nodeName ?? pod.name).slice(0, 128),
  };
}
