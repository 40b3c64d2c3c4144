// HAProxy's configuration for the fleet tests, as a pure function of the options: two frontends
// (HTTP/1.1 and h2c) in front of the same server slots, one backend each, every slot empty and in
// maintenance until the rollout driver puts a pod in it through the runtime API. Two ways to
// follow the pods:
// - `health-check`: a cloud load balancer. HAProxy checks each pod's readiness listener with its
//   default check (`option httpchk`: OPTIONS / HTTP/1.0, no Host header) every `intervalMs`; a
//   pod is out after `fall` failed checks in a row and back in after `rise` good ones.
// - `endpoints`: an EndpointSlice-following balancer (kube-proxy, a gateway): no checks; the
//   driver takes a pod out the moment it is marked terminating (after a lag it chooses).
// Retries are off (`retries 0`, no `option redispatch`, no `retry-on`): a request HAProxy sends to
// a pod that fails is an error the client sees, never hidden by a second try elsewhere. Each
// request carries the name of the slot it was sent to (SERVER_HEADER), so the application can
// tell which pod served it.

export type BalancerMode = 'health-check' | 'endpoints';

export interface HealthCheck {
  readonly intervalMs: number;
  readonly fall: number;
  readonly rise: number;
  /** Each check's timeout. */
  readonly timeoutMs: number;
  /**
   * A check `GET <path>` over HTTP/1.1 instead of HAProxy's default (OPTIONS / HTTP/1.0 without a
   * Host header): a readiness listener that answers only its own path, and only HTTP/1.1 (the peers').
   */
  readonly path?: string;
}

export interface HaproxyOptions {
  readonly mode: BalancerMode;
  /** Server slots per backend (pods that can be in the balancer at once, old and new). */
  readonly slots: number;
  readonly http1Port: number;
  readonly http2Port: number;
  /** The runtime API's Unix socket. */
  readonly statsSocket: string;
  readonly healthCheck: HealthCheck;
}

export const HTTP1_BACKEND = 'pods_h1';
export const HTTP2_BACKEND = 'pods_h2';

/** The request header HAProxy fills with the server slot's name. */
export const SERVER_HEADER = 'x-fleet-server';

export function slotName(slot: number): string {
  return `pod${slot}`;
}

export function haproxyConfig(options: HaproxyOptions): string {
  if (!Number.isInteger(options.slots) || options.slots < 1) throw new Error(`slots must be a positive integer, got ${options.slots}`);
  const { intervalMs, fall, rise, timeoutMs } = options.healthCheck;
  const checked = options.mode === 'health-check';
  const slots = Array.from({ length: options.slots }, (_, slot) => slot);
  // Placeholder address: a slot is in maintenance (`disabled`) until a pod is put in it.
  const http1Servers = slots.map((slot) => `  server ${slotName(slot)} 127.0.0.1:1 disabled${checked ? ' check port 1' : ''}`);
  // The h2c backend follows the same pods: its slots track the checked ones, or are set alike.
  const http2Servers = slots.map(
    (slot) => `  server ${slotName(slot)} 127.0.0.1:1 disabled proto h2${checked ? ` track ${HTTP1_BACKEND}/${slotName(slot)}` : ''}`,
  );
  return [
    'global',
    `  stats socket ${options.statsSocket} mode 600 level admin`,
    '  maxconn 4000',
    'defaults',
    '  mode http',
    '  timeout connect 2s',
    // Idle client connections (pooled by the clients) outlive any rollout here.
    '  timeout client 180s',
    '  timeout server 30s',
    `  timeout check ${timeoutMs}ms`,
    '  timeout http-keep-alive 180s',
    // Keep-alive to the pods, idle connections reused as HAProxy does by default.
    '  option http-keep-alive',
    '  http-reuse safe',
    '  retries 0',
    '  balance roundrobin',
    ...(checked ? [`  default-server inter ${intervalMs}ms fastinter ${intervalMs}ms downinter ${intervalMs}ms fall ${fall} rise ${rise}`] : []),
    'frontend http1',
    `  bind 127.0.0.1:${options.http1Port}`,
    `  default_backend ${HTTP1_BACKEND}`,
    'frontend http2',
    `  bind 127.0.0.1:${options.http2Port} proto h2`,
    `  default_backend ${HTTP2_BACKEND}`,
    `backend ${HTTP1_BACKEND}`,
    ...(checked ? ['  option httpchk'] : []),
    ...(checked && options.healthCheck.path !== undefined
      ? [`  http-check send meth GET uri ${options.healthCheck.path} ver HTTP/1.1 hdr Host readiness`]
      : []),
    `  http-send-name-header ${SERVER_HEADER}`,
    ...http1Servers,
    `backend ${HTTP2_BACKEND}`,
    `  http-send-name-header ${SERVER_HEADER}`,
    ...http2Servers,
    '',
  ].join('\n');
}
