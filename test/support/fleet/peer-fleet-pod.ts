// The peers' rendered pods (Envoy Gateway's Deployment, Contour's DaemonSet) as fleet pods: the pod
// of peer-podman-pod.ts with one fixture's Envoy configuration, its backend the fleet's
// application, its manager container from a chosen image (the peer's own binary, or ours as the
// drop-in), and the rollout strategy its workload renders, scaled to the fleet's size as the
// Deployment and DaemonSet controllers scale percentages.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { IPodSpec } from 'kubernetes-models/v1';
import { parseAllDocuments } from 'yaml';
import { testCertificate } from '../peer-fixtures/certificate.js';
import { FIXTURES_DIR, type PeerName } from '../peer-fixtures/fixtures.js';
import { peerBootstrap, peerPodSpec } from '../peer-pod/peer-cases.js';
import { startPeerPod } from '../peer-pod/peer-podman-pod.js';
import { BACKEND_PORT } from '../peer-pod/peer-termination.js';
import type { PodmanObjects } from '../podman/podman.js';
import type { PodmanPod } from '../podman/podman-pod.js';
import type { Strategy } from './rollout-plan.js';

export interface PeerPodChoice {
  readonly peer: PeerName;
  /** The fixture whose Envoy configuration the pod runs (its HTTP listener is the fleet's). */
  readonly fixture: string;
  /** The image the shutdown-manager container runs: the peer's own binary, or ours. */
  readonly managerImage: string;
  /** Flags a user adds to the manager container's preStop command (the peer's own flags). */
  readonly hookFlags: readonly string[];
  /** The pod's terminationGracePeriodSeconds instead of the rendered one. */
  readonly graceSeconds?: number;
}

/** Where a peer's pod takes traffic, answers readiness, serves its metrics, and runs its manager. */
export interface PeerShape {
  readonly listenerPort: number;
  readonly ready: { readonly port: number; readonly path: string };
  readonly stats: { readonly port: number; readonly path: string };
  readonly managerPort: number;
}

export const PEER_SHAPES: Readonly<Record<PeerName, PeerShape>> = {
  'envoy-gateway': { listenerPort: 10080, ready: { port: 19003, path: '/ready' }, stats: { port: 19001, path: '/stats/prometheus' }, managerPort: 19002 },
  contour: { listenerPort: 8080, ready: { port: 8002, path: '/ready' }, stats: { port: 8002, path: '/stats/prometheus' }, managerPort: 8090 },
};

/** The pod spec as the fleet runs it: the rendered one, with `hookFlags` after the manager's preStop command and `graceSeconds`. */
export function fleetPodSpec(choice: Pick<PeerPodChoice, 'peer' | 'hookFlags' | 'graceSeconds'>): IPodSpec {
  const spec = peerPodSpec(choice.peer);
  return {
    ...spec,
    ...(choice.graceSeconds === undefined ? {} : { terminationGracePeriodSeconds: choice.graceSeconds }),
    containers: spec.containers.map((c) => {
      const command = c.lifecycle?.preStop?.exec?.command;
      if (c.name !== 'shutdown-manager' || command === undefined || choice.hookFlags.length === 0) return c;
      return { ...c, lifecycle: { ...c.lifecycle, preStop: { exec: { command: [...command, ...choice.hookFlags] } } } };
    }),
  };
}

export function startPeerFleetPod(objects: PodmanObjects, choice: PeerPodChoice, envoyImage: string, upstreamPort: number): Promise<PodmanPod> {
  const shape = PEER_SHAPES[choice.peer];
  return startPeerPod(objects, {
    spec: fleetPodSpec(choice),
    bootstrap: peerBootstrap(choice),
    images: { manager: choice.managerImage, envoy: envoyImage },
    backends: [{ inPod: BACKEND_PORT, to: { host: '127.0.0.1', port: upstreamPort } }],
    ports: [...new Set([shape.listenerPort, shape.ready.port, shape.stats.port, shape.managerPort])],
    envoyMounts: [dirname(testCertificate().certFile)],
  }).then((peer) => peer.pod);
}

/**
 * Whether the peer's workload creates a new pod only once an old one is gone: a DaemonSet without
 * surge does (its controller counts a terminating pod as its node's pod, and without surge never
 * adds a second one), so each node's pod is replaced in place, drain and exit included; a
 * Deployment creates its new pods at once.
 */
export function newPodAfterExit(peer: PeerName, strategy: Strategy): boolean {
  return WORKLOADS[peer].kind === 'DaemonSet' && strategy.maxSurge === 0;
}

type IntOrPercent = number | string | undefined;

interface Workload {
  readonly spec?: {
    readonly strategy?: { readonly rollingUpdate?: { readonly maxSurge?: IntOrPercent; readonly maxUnavailable?: IntOrPercent } };
    readonly updateStrategy?: { readonly rollingUpdate?: { readonly maxSurge?: IntOrPercent; readonly maxUnavailable?: IntOrPercent } };
  };
}

/** Each peer's workload kind, as its renderer's output file names it (Contour's output carries no `kind`). */
const WORKLOADS: Readonly<Record<PeerName, { readonly file: string; readonly kind: 'Deployment' | 'DaemonSet' }>> = {
  'envoy-gateway': { file: 'deployment.yaml', kind: 'Deployment' },
  contour: { file: 'daemonset.yaml', kind: 'DaemonSet' },
};

/** The rolling update the peer's workload renders, for `replicas` pods. */
export function peerStrategy(peer: PeerName, replicas: number): Strategy {
  const { file, kind } = WORKLOADS[peer];
  const path = join(FIXTURES_DIR, peer, 'pod', file);
  const workload = parseAllDocuments(readFileSync(path, 'utf8'))
    .map((doc) => doc.toJSON() as Workload | null)
    .find((doc) => doc?.spec?.strategy !== undefined || doc?.spec?.updateStrategy !== undefined);
  if (workload === undefined || workload === null) throw new Error(`${path}: no workload with an update strategy`);
  return scaledStrategy(kind, kind === 'Deployment' ? workload.spec?.strategy?.rollingUpdate : workload.spec?.updateStrategy?.rollingUpdate, replicas);
}

/**
 * A rollingUpdate's numbers for `replicas` pods, as the controllers compute them: a Deployment
 * defaults both to 25 %, rounds maxSurge up and maxUnavailable down; a DaemonSet defaults
 * maxUnavailable to 1 and maxSurge to 0 and rounds both up. Both fall back to maxUnavailable 1
 * when the two come out 0.
 */
export function scaledStrategy(
  kind: 'Deployment' | 'DaemonSet',
  rolling: { maxSurge?: IntOrPercent; maxUnavailable?: IntOrPercent } | undefined,
  replicas: number,
): Strategy {
  const deployment = kind === 'Deployment';
  const scale = (value: IntOrPercent, fallback: IntOrPercent, roundUp: boolean): number => {
    const given = value ?? fallback;
    if (typeof given === 'number') return given;
    const percent = /^(\d+)%$/.exec(given ?? '');
    if (percent === null) throw new Error(`not a number or percentage: ${String(given)}`);
    const exact = (Number(percent[1]) * replicas) / 100;
    return roundUp ? Math.ceil(exact) : Math.floor(exact);
  };
  const maxSurge = scale(rolling?.maxSurge, deployment ? '25%' : 0, true);
  const maxUnavailable = scale(rolling?.maxUnavailable, deployment ? '25%' : 1, !deployment);
  return maxSurge === 0 && maxUnavailable === 0 ? { maxSurge: 0, maxUnavailable: 1 } : { maxSurge, maxUnavailable };
}
