// One pod termination under load, as tests, the demo and the benchmarks all run it: clients and a
// load balancer send traffic to the pod's Envoy; at time zero kubelet starts terminating the pod
// and the load balancer starts its deprogramming delay, both at once, as in Kubernetes.
import { request } from 'node:http';
import { EnvoyStandIn } from './envoy/stand-in.js';
import type { EnvoyPod } from './envoy-pod.js';
import type { Timeline } from './kubelet/timeline.js';
import { Traffic, type TrafficOptions, type TrafficStats } from './traffic/traffic.js';

/** How long clients keep going after the load balancer stopped sending new connections to the pod. */
const AFTER_DEPROGRAMMED_MS = 300;

export interface LoadedTerminationOptions {
  /** How long load balancers keep sending new connections to the pod after termination starts. */
  readonly deprogrammingDelayMs: number;
  /** The pod's data-plane listener the clients use. */
  readonly listener?: string;
  readonly traffic?: Partial<Omit<TrafficOptions, 'terminating' | 'healthy'>>;
  /** Sample the listener's live connection gauge through the admin API every this many ms (0: off). */
  readonly sampleEveryMs?: number;
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
}

export async function terminateUnderLoad(pod: EnvoyPod, options: LoadedTerminationOptions): Promise<LoadedTermination> {
  const listener = options.listener ?? 'ingress';
  const port = pod.listeners[listener];
  if (port === undefined) throw new Error(`the pod has no listener ${listener}`);
  // Another pod behind the same load balancer, where new connections go once this one is deprogrammed.
  const healthy = await EnvoyStandIn.start({ drainStrategy: 'immediate', listeners: [{ name: listener, kind: 'http', responseDelayMs: 5 }] });
  const traffic = await Traffic.start({
    terminating: { host: '127.0.0.1', port },
    healthy: { host: '127.0.0.1', port: healthy.listenerPort(listener) },
    ...options.traffic,
  });
  try {
    await new Promise((resolve) => setTimeout(resolve, 300)); // steady load first
    const requestsBeforeTermination = traffic.stats.requests.terminating;
    const samples: ConnectionSample[] = [];
    const terminating = pod.pod.terminate(); // the timeline starts here
    const sampling = options.sampleEveryMs ? sampleConnections(pod.adminAddress, listener, options.sampleEveryMs, pod.pod.timeline.startedAt, samples) : undefined;
    traffic.terminationStarted(options.deprogrammingDelayMs);
    const timeline = await terminating;
    sampling?.stop();
    // Keep the clients going until the load balancer has let go of the pod (plus a margin): a pod
    // that died before that must show its refused connections, not hide them.
    const lettingGo = (traffic.deprogrammedAt ?? Date.now()) + AFTER_DEPROGRAMMED_MS - Date.now();
    if (lettingGo > 0) await new Promise((resolve) => setTimeout(resolve, lettingGo));
    return { timeline, traffic: await traffic.stop(), samples, requestsBeforeTermination };
  } finally {
    await traffic.stop();
    await healthy.close();
  }
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

/** The stand-in's admin address ('127.0.0.1:PORT', '[::1]:PORT', 'unix:/path') as node:http options. */
export function adminTarget(adminAddress: string): { host?: string; port?: number; socketPath?: string } {
  if (adminAddress.startsWith('unix:')) return { socketPath: adminAddress.slice('unix:'.length) };
  const separator = adminAddress.lastIndexOf(':');
  return { host: adminAddress.slice(0, separator).replace(/^\[|\]$/g, ''), port: Number(adminAddress.slice(separator + 1)) };
}
