// One termination of a peer's generated pod under load (peer-podman-pod.ts): on an HTTP listener,
// HTTP/1.1 and HTTP/2 clients through a load balancer, a long request of each protocol in flight
// and idle pooled connections of each protocol; on the others, their own protocol's load
// (side-load.ts); and a scraper's keep-alive connection on the peer's stats listener. At time zero
// kubelet (the podman stand-in, as a 1.33 kubelet does it) starts terminating the pod and the load
// balancer its deprogramming delay. Everything seen is returned.
import { setTimeout as sleep } from 'node:timers/promises';
import type { IPodSpec } from 'kubernetes-models/v1';
import { testCertificate } from '../peer-fixtures/certificate.js';
import type { JsonObject } from '../peer-fixtures/proto-json.js';
import type { PodmanObjects } from '../podman/podman.js';
import { type PodTermination, terminatePod } from '../podman/podman-kubelet.js';
import { logs, untilLogged } from '../podman/wait.js';
import { bounded } from '../poll.js';
import { startBackends } from '../protocols/backends.js';
import { type Connection, idleHttp1, idleHttp2, longRequest, type SideResult } from '../protocols/clients.js';
import { startHealthyEnvoy } from '../real-envoy/healthy-envoy.js';
import { waitFor } from '../traffic/pod-conditions.js';
import { Traffic, type TrafficStats } from '../traffic/traffic.js';
import { startPeerPod } from './peer-podman-pod.js';
import { HOLD_AFTER_DELETION_MS, LONG_REQUEST_MS, type SideLoadFactory, type SideReport } from './side-load.js';
import { SideLoads } from './side-loads-run.js';

/** Where the pod's Envoy reaches its backend (the fixtures' clusters, moved to loopback). */
export const BACKEND_PORT = 3000;
/** How long the load balancer keeps sending new connections after the pod's deletion: inside the minimum drain. */
const DEPROGRAMMING_DELAY_MS = 1_000;
const STEADY_LOAD_REQUESTS = 20;
/** The long requests all reach the backend within their 1.5 s of each other on any machine; a bound, so a slow one fails with a reason. */
const LONG_IN_FLIGHT_WITHIN_MS = 30_000;
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
  /** The pod's HTTP listener (a catch-all virtual host) the load balancer's clients use; none: side loads only. */
  readonly listenerPort?: number;
  /** The peer's stats listener the scraper keeps a connection to. */
  readonly stats: { readonly port: number; readonly path: string };
  /** Every other pod port kubelet reaches: the manager's, the readiness probe's. */
  readonly podPorts: readonly number[];
  /** Host directories Envoy's container sees at the same path (the fixture's certificate). */
  readonly envoyMounts: readonly string[];
  /** Loads of the fixture's other listeners, each on its own protocol, and the pod ports they use. */
  readonly sides?: readonly SideLoadFactory[];
  readonly sidePorts?: readonly number[];
}

export interface PeerTermination {
  readonly termination: PodTermination;
  readonly traffic: TrafficStats;
  readonly requestsBeforeTermination: number;
  /** What each side load saw. */
  readonly sides: readonly SideReport[];
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

/** A termination with load balancer clients on `listenerPort` (and any side loads). */
export async function terminatePeerUnderLoad(
  objects: PodmanObjects,
  options: PeerTerminationOptions & { readonly listenerPort: number },
): Promise<PeerTermination> {
  const { traffic, ...run } = await terminatePeer(objects, options);
  if (traffic === undefined) throw new Error('the load balancer clients did not run');
  return { ...run, traffic };
}

/** A termination of the pod under its loads; `traffic` is undefined without `listenerPort`. */
export async function terminatePeer(
  objects: PodmanObjects,
  options: PeerTerminationOptions,
): Promise<Omit<PeerTermination, 'traffic'> & { readonly traffic: TrafficStats | undefined }> {
  const certificate = testCertificate();
  const backend = await startBackends(certificate.certFile, certificate.keyFile);
  const upstream = backend.upstream;
  const listenerPort = options.listenerPort;
  const healthy = listenerPort === undefined ? undefined : await startHealthyEnvoy();
  const idle: Connection[] = [];
  let traffic: Traffic | undefined;
  let sides: SideLoads | undefined;
  try {
    const peer = await startPeerPod(objects, {
      spec: options.spec,
      bootstrap: options.bootstrap,
      images: options.images,
      backends: [{ inPod: BACKEND_PORT, to: { host: '127.0.0.1', port: backend.port } }],
      ports: [...new Set([...(listenerPort === undefined ? [] : [listenerPort]), options.stats.port, ...options.podPorts, ...(options.sidePorts ?? [])])],
      envoyMounts: options.envoyMounts,
    });
    sides = await SideLoads.start(options.sides ?? [], { port: (inPod) => peer.bridge.port(inPod), backend, podPid: peer.pid });
    idle.push(await idleHttp1(peer.bridge.port(options.stats.port), options.stats.path));
    const long: Array<Promise<SideResult>> = [];
    if (listenerPort !== undefined && healthy !== undefined) {
      const port = peer.bridge.port(listenerPort);
      traffic = await Traffic.start({ terminating: { host: '127.0.0.1', port }, healthy: { host: '127.0.0.1', port: healthy.port }, requestTimeoutMs: 5_000 });
      idle.push(await idleHttp1(port), await idleHttp2(port));
      const running = traffic;
      await waitFor('steady load on the pod', () => running.stats.requests.terminating >= STEADY_LOAD_REQUESTS, 30_000);
      const path = `/slow/${LONG_REQUEST_MS}`;
      long.push(longRequest(port, 'http1', path), longRequest(port, 'http2', path));
    }
    sides.startLong();
    const longRequests = Promise.all(long).then((results) => ({ results, at: Date.now() }));
    const inFlight = long.length + sides.slowRequests;
    await bounded(upstream.slowInFlight(inFlight), `${inFlight} long requests in flight at once, past Envoy`, LONG_IN_FLIGHT_WITHIN_MS);
    const requestsBeforeTermination = traffic?.stats.requests.terminating ?? 0;
    traffic?.terminationStarted(DEPROGRAMMING_DELAY_MS);
    const zero = Date.now();
    sides.terminationStarted(zero, zero + DEPROGRAMMING_DELAY_MS);
    const allIdle = [...idle, ...sides.idle];
    // Held streams end HOLD_AFTER_DELETION_MS in: only then are idle connections all that is left.
    const terminated = new AbortController();
    const releaseAfterMs = RELEASE_IDLE_AFTER_MS + ((options.sides ?? []).length > 0 ? HOLD_AFTER_DELETION_MS : 0);
    const release = releaseIdleOnceHeld(peer.pod.container('shutdown-manager').id, allIdle, releaseAfterMs, terminated.signal);
    const termination = await terminatePod(peer.pod, { hooks: true });
    terminated.abort();
    const idleReleasedByTest = await release;
    // Clients keep going until each has sent a request after the load balancer let go of the pod
    // and the pod was gone: a pod that died too early shows its refused or reset connections.
    await traffic?.untilEveryClientSentSince(Math.max(traffic.deprogrammedAt ?? 0, Date.now()));
    const sideReports = await sides.finish();
    const idleClosed = allIdle.map((connection) => connection.closed());
    const manager = termination.containers['shutdown-manager'];
    const stats = await traffic?.stop();
    const longDone = await longRequests;
    return {
      termination,
      traffic: stats,
      requestsBeforeTermination,
      sides: sideReports,
      longRequests: longDone.results,
      busyUntil: Math.max(long.length > 0 ? longDone.at : 0, stats?.lastRequestToTerminatingAt ?? 0, ...sideReports.map((side) => side.busyUntil)),
      idleClosed,
      idleReleasedByTest,
      managerLog: manager === undefined ? '' : await logs(manager.id),
    };
  } finally {
    await traffic?.stop();
    await sides?.close();
    for (const connection of idle) await connection.close();
    await healthy?.stop();
    await backend.close();
  }
}

/**
 * Closes the idle connections from the client side once the drain has run `afterMs`
 * (from its hook's 'graceful drain started' in the manager container's log) unless the pod is gone
 * first. Resolves with whether any was still open then: the drain was holding on to them.
 */
async function releaseIdleOnceHeld(
  managerId: string,
  idle: ReadonlyArray<{ closed(): boolean; close(): Promise<void> }>,
  afterMs: number,
  terminated: AbortSignal,
): Promise<boolean> {
  try {
    await untilLogged(managerId, 'graceful drain started', terminated);
    await sleep(afterMs, undefined, { signal: terminated });
  } catch {
    return false; // the pod was gone first
  }
  const held = idle.some((connection) => !connection.closed());
  for (const connection of idle) void connection.close();
  return held;
}
