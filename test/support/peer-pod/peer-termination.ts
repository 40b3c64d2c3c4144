// One termination of a peer's generated pod under load (peer-podman-pod.ts): HTTP/1.1 and HTTP/2
// clients through a load balancer, a long request of each protocol in flight, idle pooled
// connections of each protocol, and a scraper's keep-alive connection on the peer's stats
// listener. At time zero kubelet (the podman stand-in, as a 1.33 kubelet does it) starts
// terminating the pod and the load balancer its deprogramming delay. Everything seen is returned.
import { setTimeout as sleep } from 'node:timers/promises';
import type { IPodSpec } from 'kubernetes-models/v1';
import { terminatePod, type PodTermination } from '../../image/support/podman-kubelet.js';
import type { PodmanObjects } from '../../image/support/podman.js';
import { logs, untilLogged } from '../../image/support/wait.js';
import type { JsonObject } from '../peer-fixtures/proto-json.js';
import { startHealthyEnvoy } from '../real-envoy/healthy-envoy.js';
import { startUpstream } from '../real-envoy/upstream.js';
import { waitFor } from '../traffic/pod-conditions.js';
import { idleHttp1, idleHttp2, longRequest, type IdleConnection, type SideResult } from '../traffic/side-clients.js';
import { Traffic, type TrafficStats } from '../traffic/traffic.js';
import { startPeerPod } from './peer-podman-pod.js';

/** Where the pod's Envoy reaches its backend (the fixtures' clusters, moved to loopback). */
export const BACKEND_PORT = 3000;
/** How long the load balancer keeps sending new connections after the pod's deletion: inside the minimum drain. */
const DEPROGRAMMING_DELAY_MS = 1_000;
/** The long requests: in flight at time zero, answered during the drain. */
const LONG_REQUEST_MS = 1_500;
const STEADY_LOAD_REQUESTS = 20;
/**
 * A drain still held this long after it began (its hook may start seconds after time zero on a busy
 * machine) closes the idle connections from the client side, so a drain that does not tell idle
 * connections apart (Contour's has no timeout) still ends.
 */
const RELEASE_IDLE_AFTER_MS = 8_000;

export interface PeerTerminationOptions {
  readonly spec: IPodSpec;
  readonly bootstrap: JsonObject;
  readonly images: { readonly manager: string; readonly envoy: string };
  /** The pod's HTTP listener the clients use, and the peer's stats listener the scraper keeps a connection to. */
  readonly listenerPort: number;
  readonly stats: { readonly port: number; readonly path: string };
  /** Every other pod port kubelet reaches: the manager's, the readiness probe's. */
  readonly podPorts: readonly number[];
  /** Host directories Envoy's container sees at the same path (the fixture's certificate). */
  readonly envoyMounts: readonly string[];
}

export interface PeerTermination {
  readonly termination: PodTermination;
  readonly traffic: TrafficStats;
  readonly requestsBeforeTermination: number;
  readonly longRequests: readonly SideResult[];
  /** Date.now() when the last request on the pod was answered (load or long request): from then on only idle connections were left. */
  readonly busyUntil: number;
  /** Whether each idle connection was closed by the pod (true) before the test closed it. */
  readonly idleClosed: readonly boolean[];
  /** The drain was still held by them at RELEASE_IDLE_AFTER_MS: the test closed the idle connections. */
  readonly idleReleasedByTest: boolean;
  /** The shutdown-manager container's log (the hook's lines too, mirrored to PID 1's stdout). */
  readonly managerLog: string;
}

export async function terminatePeerUnderLoad(objects: PodmanObjects, options: PeerTerminationOptions): Promise<PeerTermination> {
  const upstream = await startUpstream();
  const healthy = await startHealthyEnvoy();
  const idle: IdleConnection[] = [];
  let traffic: Traffic | undefined;
  try {
    const peer = await startPeerPod(objects, {
      spec: options.spec,
      bootstrap: options.bootstrap,
      images: options.images,
      backends: [{ inPod: BACKEND_PORT, to: { host: '127.0.0.1', port: upstream.port } }],
      ports: [...new Set([options.listenerPort, options.stats.port, ...options.podPorts])],
      envoyMounts: options.envoyMounts,
    });
    const port = peer.bridge.port(options.listenerPort);
    traffic = await Traffic.start({ terminating: { host: '127.0.0.1', port }, healthy: { host: '127.0.0.1', port: healthy.port }, requestTimeoutMs: 5_000 });
    idle.push(await idleHttp1(port), await idleHttp2(port), await idleHttp1(peer.bridge.port(options.stats.port), options.stats.path));
    const running = traffic;
    await waitFor('steady load on the pod', () => running.stats.requests.terminating >= STEADY_LOAD_REQUESTS, 30_000);
    const path = `/slow/${LONG_REQUEST_MS}`;
    const longRequests = Promise.all([longRequest(port, 'http1', path), longRequest(port, 'http2', path)]).then((results) => ({ results, at: Date.now() }));
    await upstream.slowInFlight(2); // both are in flight, past Envoy
    const requestsBeforeTermination = traffic.stats.requests.terminating;
    traffic.terminationStarted(DEPROGRAMMING_DELAY_MS);
    const terminated = new AbortController();
    const release = releaseIdleOnceHeld(peer.pod.container('shutdown-manager').id, idle, terminated.signal);
    const termination = await terminatePod(peer.pod, { hooks: true });
    terminated.abort();
    const idleReleasedByTest = await release;
    // Clients keep going until each has sent a request after the load balancer let go of the pod
    // and the pod was gone: a pod that died too early shows its refused or reset connections.
    await traffic.untilEveryClientSentSince(Math.max(traffic.deprogrammedAt ?? 0, Date.now()));
    const idleClosed = idle.map((connection) => connection.closed());
    const manager = termination.containers['shutdown-manager'];
    const stats = await traffic.stop();
    const long = await longRequests;
    return {
      termination,
      traffic: stats,
      requestsBeforeTermination,
      longRequests: long.results,
      busyUntil: Math.max(long.at, stats.lastRequestToTerminatingAt ?? 0),
      idleClosed,
      idleReleasedByTest,
      managerLog: manager === undefined ? '' : await logs(manager.id),
    };
  } finally {
    await traffic?.stop();
    for (const connection of idle) await connection.close();
    await healthy.stop();
    await upstream.close();
  }
}

/**
 * Closes the idle connections from the client side once the drain has run RELEASE_IDLE_AFTER_MS
 * (from its hook's 'graceful drain started' in the manager container's log) unless the pod is gone
 * first. Resolves with whether any was still open then: the drain was holding on to them.
 */
async function releaseIdleOnceHeld(managerId: string, idle: readonly IdleConnection[], terminated: AbortSignal): Promise<boolean> {
  try {
    await untilLogged(managerId, 'graceful drain started', terminated);
    await sleep(RELEASE_IDLE_AFTER_MS, undefined, { signal: terminated });
  } catch {
    return false; // the pod was gone first
  }
  const held = idle.some((connection) => !connection.closed());
  for (const connection of idle) void connection.close();
  return held;
}
