// One pod termination under load, like test/support/termination-run.ts, except that the clients
// keep going until the load balancer has deprogrammed the pod (and a little longer) even when
// the pod is gone sooner: the requests a dead pod still receives, and fails, are counted too.
import type { EnvoyPod } from '../../test/support/envoy-pod.js';
import type { Timeline } from '../../test/support/kubelet/timeline.js';
import { startHealthyEnvoy } from '../../test/support/real-envoy/healthy-envoy.js';
import { Traffic, type TrafficOptions, type TrafficStats } from '../../test/support/traffic/traffic.js';
import { sleep } from './processes.js';

const LISTENER = 'ingress';
/** Steady load before the pod is deleted. */
const WARM_UP_MS = 300;
/** Clients keep going this long after the load balancer deprogrammed the pod. */
const AFTER_DEPROGRAMMED_MS = 500;

export interface LoadedTermination {
  readonly timeline: Timeline;
  readonly traffic: TrafficStats;
  readonly requestsBeforeTermination: number;
}

export async function terminateUntilDeprogrammed(
  pod: EnvoyPod,
  deprogrammingDelayMs: number,
  traffic: Partial<Omit<TrafficOptions, 'terminating' | 'healthy'>>,
): Promise<LoadedTermination> {
  const port = pod.listeners[LISTENER];
  if (port === undefined) throw new Error(`the pod has no listener ${LISTENER}`);
  // The other pod behind the same load balancer.
  const healthy = await startHealthyEnvoy();
  const clients = await Traffic.start({ terminating: { host: '127.0.0.1', port }, healthy: { host: '127.0.0.1', port: healthy.port }, ...traffic });
  try {
    await sleep(WARM_UP_MS);
    const requestsBeforeTermination = clients.stats.requests.terminating;
    const terminating = pod.pod.terminate(); // the timeline starts here
    clients.terminationStarted(deprogrammingDelayMs);
    const timeline = await terminating;
    await sleep((clients.deprogrammedAt ?? Date.now()) + AFTER_DEPROGRAMMED_MS - Date.now());
    return { timeline, traffic: await clients.stop(), requestsBeforeTermination };
  } finally {
    await clients.stop();
    await healthy.stop();
  }
}
