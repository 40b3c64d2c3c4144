// One pod termination under load, as tests, the demo and the benchmarks all run it: clients and a
// load balancer send traffic to the pod's Envoy; at time zero kubelet starts terminating the pod
// and the load balancer starts its deprogramming delay, both at once, as in Kubernetes.
import { request } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import type { EnvoyPod } from './envoy-pod.js';
import type { Timeline } from './kubelet/timeline.js';
import { type Connection, idleHttp1, idleHttp2, longRequest, type SideResult } from './protocols/clients.js';
import { startHealthyEnvoy } from './real-envoy/healthy-envoy.js';
import { get } from './real-envoy/process.js';
import type { Upstream } from './real-envoy/upstream.js';
import { waitFor } from './traffic/pod-conditions.js';
import { Traffic, type TrafficOptions, type TrafficStats } from './traffic/traffic.js';

/** Requests the pod serves before its termination starts: the load is running, not starting. */
const STEADY_LOAD_REQUESTS = 20;

export interface LoadedTerminationOptions {
  /** How long load balancers keep sending new connections to the pod after termination starts. */
  readonly deprogrammingDelayMs: number;
  /** The pod's data-plane listener the clients use. */
  readonly listener?: string;
  readonly traffic?: Partial<Omit<TrafficOptions, 'terminating' | 'healthy'>>;
  /** Sample the listener's live connection gauge through the admin API every this many ms (0: off). */
  readonly sampleEveryMs?: number;
  /** Wait for steady load (STEADY_LOAD_REQUESTS served) before termination begins; false: begin at once. */
  readonly steadyLoadFirst?: boolean;
  /** One HTTP/1.1 and one HTTP/2 request of this many ms to the upstream, both in flight when termination begins. */
  readonly longRequest?: { readonly upstream: Upstream; readonly durationMs: number };
  /** Pooled connections left idle before termination: HTTP/1.1 and HTTP/2 on the listener, and a scraper's on `stats`. */
  readonly idleClients?: boolean;
  /** Read these stats (exact names) from the admin API right before termination begins. */
  readonly statsAtTermination?: readonly string[];
  /**
   * Keep the clients going until this long after the load balancer deprogrammed the pod, even when
   * the pod is gone sooner, so the requests a dead pod still receives are counted (a fixed window,
   * as a benchmark measures); unset: until every client has sent one request after both.
   */
  readonly afterDeprogrammedMs?: number;
}

export interface ConnectionSample {
  /** Milliseconds since termination began. */
  readonly t: number;
  readonly connections: number;
}

export interface LoadedTermination {
  readonly timeline: Timeline;
  readonly traffic: TrafficStats;
  readonly samples: readonly ConnectionSample[];
  /** Requests each pod served before termination began, to show the load was real. */
  readonly requestsBeforeTermination: number;
  /** The long requests' outcomes (none unless asked for). */
  readonly longRequests: readonly SideResult[];
  /** The idle pooled connections, after the pod is gone. */
  readonly idle: readonly Connection[];
  /** The stats asked for, as Envoy reported them right before termination began. */
  readonly statsAtTermination: Readonly<Record<string, number>>;
}

export async function terminateUnderLoad(pod: EnvoyPod, options: LoadedTerminationOptions): Promise<LoadedTermination> {
  const listener = options.listener ?? 'ingress';
  const port = pod.listeners[listener];
  if (port === undefined) throw new Error(`the pod has no listener ${listener}`);
  // Another pod behind the same load balancer, where new connections go once this one is deprogrammed.
  const healthy = await startHealthyEnvoy();
  const idle: Connection[] = [];
  const traffic = await Traffic.start({ terminating: { host: '127.0.0.1', port }, healthy: { host: '127.0.0.1', port: healthy.port }, ...options.traffic });
  try {
    if (options.idleClients === true) {
      const stats = pod.listeners.stats;
      idle.push(await idleHttp1(port), await idleHttp2(port));
      if (stats !== undefined) idle.push(await idleHttp1(stats, '/stats/prometheus'));
    }
    // Steady load first (every client served, a few times over), unless told to start at once.
    if (options.steadyLoadFirst !== false) await waitFor('steady load on the pod', () => traffic.stats.requests.terminating >= STEADY_LOAD_REQUESTS, 30_000);
    let longRequests: Promise<SideResult[]> = Promise.resolve([]);
    if (options.longRequest !== undefined) {
      const path = `/slow/${options.longRequest.durationMs}`;
      const sent = Promise.all([longRequest(port, 'http1', path), longRequest(port, 'http2', path)]);
      await options.longRequest.upstream.slowInFlight(2); // both are in flight, past Envoy
      longRequests = sent;
    }
    const statsAtTermination = options.statsAtTermination === undefined ? {} : await readStats(pod.adminAddress, options.statsAtTermination);
    const requestsBeforeTermination = traffic.stats.requests.terminating;
    const samples: ConnectionSample[] = [];
    const terminating = pod.pod.terminate(); // the timeline starts here
    const sampling = options.sampleEveryMs
      ? sampleConnections(pod.adminAddress, listener, options.sampleEveryMs, pod.pod.timeline.startedAt, samples)
      : undefined;
    traffic.terminationStarted(options.deprogrammingDelayMs);
    const timeline = await terminating;
    sampling?.stop();
    // Keep the clients going until each has sent a request after the load balancer let go of the
    // pod and the pod was gone: a pod that died too early shows its refused or reset connections.
    if (options.afterDeprogrammedMs === undefined) await traffic.untilEveryClientSentSince(Math.max(traffic.deprogrammedAt ?? 0, Date.now()));
    else await sleep(Math.max(0, (traffic.deprogrammedAt ?? Date.now()) + options.afterDeprogrammedMs - Date.now()));
    return { timeline, traffic: await traffic.stop(), samples, requestsBeforeTermination, longRequests: await longRequests, idle, statsAtTermination };
  } finally {
    await traffic.stop();
    for (const connection of idle) await connection.close();
    await healthy.stop();
  }
}

/** One admin read of the named stats (exact names). */
async function readStats(adminAddress: string, names: readonly string[]): Promise<Record<string, number>> {
  const filter = `^(${names.map((name) => name.replace(/\./g, '\\.')).join('|')})$`;
  const { body } = await get(adminAddress, `/stats?filter=${filter}&format=json`);
  return Object.fromEntries((JSON.parse(body) as { stats: Array<{ name: string; value: number }> }).stats.map((stat) => [stat.name, stat.value]));
}

/** Reads `listener.<name>.downstream_cx_active` from the pod's admin API until stopped or the pod is gone. */
function sampleConnections(adminAddress: string, listener: string, everyMs: number, since: number, into: ConnectionSample[]): { stop(): void } {
  const target = adminTarget(adminAddress);
  let stopped = false;
  const tick = (): void => {
    if (stopped) return;
    const req = request({ ...target, path: `/stats?filter=^listener\\.${listener}\\.downstream_cx_active$&format=json`, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      res.on('end', () => {
        const value = (JSON.parse(body) as { stats: Array<{ value: number }> }).stats[0]?.value;
        if (value !== undefined && !stopped) into.push({ t: Date.now() - since, connections: value });
        setTimeout(tick, everyMs);
      });
    });
    req.on('error', () => (stopped = true)); // Envoy is gone
    req.end();
  };
  tick();
  return { stop: () => (stopped = true) };
}

/** An admin address ('127.0.0.1:PORT', '[::1]:PORT', 'unix:/path') as node:http options. */
export function adminTarget(adminAddress: string): { host?: string; port?: number; socketPath?: string } {
  if (adminAddress.startsWith('unix:')) return { socketPath: adminAddress.slice('unix:'.length) };
  const separator = adminAddress.lastIndexOf(':');
  return { host: adminAddress.slice(0, separator).replace(/^\[|\]$/g, ''), port: Number(adminAddress.slice(separator + 1)) };
}
