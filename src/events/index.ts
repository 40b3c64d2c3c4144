// Kubernetes Events for each drain, on the pod: what the drain did, readable with `kubectl get
// events` after the pod is gone. Off unless enabled (--events); sent by the manager after it
// released Envoy, over Node's HTTPS with the pod's service-account token.
export { DrainEvents } from './drain-events.js';
export { eventsSetup, EVENTS_ENV, type EventsSetup, type EventsTarget } from './in-cluster.js';
