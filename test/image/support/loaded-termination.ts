// One termination of a rendered pod in podman under load: clients and a load balancer send
// HTTP/1.1 and HTTP/2 traffic to the pod's Envoy, with a second replica (real Envoy from the same
// bootstrap) behind the same load balancer; at time zero kubelet starts terminating the pod and the
// load balancer starts its deprogramming delay, both at once, as when a pod is deleted.
import type { RenderedEnvoyPod } from '../../support/chart/manifests.js';
import type { PodmanObjects } from '../../support/podman/podman.js';
import { type PodTermination, terminatePod } from '../../support/podman/podman-kubelet.js';
import { type PodImages, startPodmanPod } from '../../support/podman/podman-pod.js';
import { startRealEnvoy } from '../../support/real-envoy/process.js';
import { Traffic, type TrafficStats } from '../../support/traffic/traffic.js';

/** How long the load balancer keeps sending new connections to the pod after its deletion. */
export const DEPROGRAMMING_DELAY_MS = 1_500;

export interface LoadedTermination {
  readonly termination: PodTermination;
  readonly traffic: TrafficStats;
  /** Requests the pod served before its termination began. */
  readonly requestsBeforeTermination: number;
}

export async function terminateUnderLoad(
  rendered: RenderedEnvoyPod,
  objects: PodmanObjects,
  images: PodImages,
  options: { hooks: boolean; listenerPort?: number },
): Promise<LoadedTermination> {
  const pod = await startPodmanPod(rendered, objects, images);
  const other = await startRealEnvoy({ bootstrap: rendered.bootstrap });
  let traffic: Traffic | undefined;
  try {
    traffic = await Traffic.start({
      terminating: { host: '127.0.0.1', port: pod.ports.port(options.listenerPort ?? 8080) },
      healthy: { host: '127.0.0.1', port: other.ports.ingress ?? 0 },
      requestTimeoutMs: 5_000,
    });
    const requestsBeforeTermination = traffic.stats.requests.terminating;
    traffic.terminationStarted(DEPROGRAMMING_DELAY_MS);
    const termination = await terminatePod(pod, { hooks: options.hooks });
    // Clients keep going until each has sent a request after the load balancer let go of the pod
    // and the pod was gone: a pod that died too early shows its refused or reset connections.
    await traffic.untilEveryClientSentSince(Math.max(traffic.deprogrammedAt ?? 0, Date.now()));
    return { termination, traffic: await traffic.stop(), requestsBeforeTermination };
  } finally {
    await traffic?.stop();
    await other.stop();
  }
}
