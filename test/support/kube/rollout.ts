// What a workload's controller made of its current revision: the Deployment's ReplicaSet that
// carries its revision, or the DaemonSet's newest ControllerRevision, and the pods of that revision.
// Without a kubelet no pod ever runs, so a rollout is seen by the pods it creates, never by its end.
import { pollFor } from '../poll.js';
import type { KubeClient, KubeObject } from './client.js';

interface Meta {
  readonly name: string;
  readonly namespace?: string;
  readonly uid?: string;
  readonly generation?: number;
  readonly labels?: Record<string, string>;
  readonly annotations?: Record<string, string>;
  readonly ownerReferences?: readonly { readonly uid: string; readonly kind: string; readonly name: string }[];
  readonly [field: string]: unknown;
}

interface Owned extends KubeObject {
  readonly metadata: Meta;
}

export interface PodSpec {
  readonly serviceAccountName?: string;
  readonly serviceAccount?: string;
  readonly automountServiceAccountToken?: boolean;
  readonly hostNetwork?: boolean;
  readonly dnsPolicy?: string;
  readonly containers: readonly Container[];
  readonly initContainers?: readonly Container[];
  readonly volumes?: readonly Volume[];
  readonly imagePullSecrets?: readonly { readonly name: string }[];
}

interface Container {
  readonly name: string;
  readonly ports?: readonly { readonly name?: string; readonly containerPort: number; readonly hostPort?: number }[];
  readonly env?: readonly {
    readonly name: string;
    readonly valueFrom?: { readonly secretKeyRef?: { readonly name: string }; readonly configMapKeyRef?: { readonly name: string } };
  }[];
}

interface Volume {
  readonly name: string;
  readonly configMap?: { readonly name: string };
  readonly secret?: { readonly secretName: string };
  readonly projected?: { readonly sources: readonly { readonly configMap?: { readonly name: string }; readonly secret?: { readonly name: string } }[] };
}

export interface Pod extends Owned {
  readonly spec: PodSpec;
}

export interface Workload extends Owned {
  readonly spec: {
    readonly selector: { readonly matchLabels: Record<string, string> };
    readonly template: { readonly metadata: { readonly labels?: Record<string, string> }; readonly spec: PodSpec };
  };
  readonly status?: { readonly observedGeneration?: number };
}

export type WorkloadKind = 'Deployment' | 'DaemonSet';

const REVISION = 'deployment.kubernetes.io/revision';

const ownedBy = (object: Owned, uid: string | undefined): boolean => (object.metadata.ownerReferences ?? []).some((owner) => owner.uid === uid);

/** The owner and the pod label of the workload's current revision, once its controller has seen the workload's latest spec. */
async function currentRevision(
  client: KubeClient,
  kind: WorkloadKind,
  name: string,
  namespace: string,
): Promise<{ owner: string; label: string; hash: string } | string> {
  const workload = await client.get<Workload>('apps/v1', kind, name, namespace);
  if (workload === undefined) return `no ${kind} ${name}`;
  if ((workload.status?.observedGeneration ?? 0) < (workload.metadata.generation ?? 1))
    return `${kind} generation ${workload.metadata.generation} not yet observed`;
  if (kind === 'Deployment') {
    const revision = workload.metadata.annotations?.[REVISION];
    const replicaSet = (await client.list<Owned>('apps/v1', 'ReplicaSet', namespace)).find(
      (rs) => ownedBy(rs, workload.metadata.uid) && rs.metadata.annotations?.[REVISION] === revision,
    );
    const hash = replicaSet?.metadata.labels?.['pod-template-hash'];
    if (replicaSet === undefined || hash === undefined) return `no ReplicaSet of revision ${revision}`;
    return { owner: replicaSet.metadata.uid ?? '', label: 'pod-template-hash', hash };
  }
  const revisions = (await client.list<Owned & { revision: number }>('apps/v1', 'ControllerRevision', namespace)).filter((r) =>
    ownedBy(r, workload.metadata.uid),
  );
  const newest = revisions.sort((a, b) => b.revision - a.revision)[0];
  const hash = newest?.metadata.labels?.['controller-revision-hash'];
  if (hash === undefined) return 'no ControllerRevision yet';
  return { owner: workload.metadata.uid ?? '', label: 'controller-revision-hash', hash };
}

/** The Warning events in the namespace: why a controller made no pod (FailedCreate and its message). */
async function warnings(client: KubeClient, namespace: string): Promise<string> {
  const events = await client.list<Owned & { type?: string; reason?: string; message?: string; involvedObject?: { kind?: string; name?: string } }>(
    'v1',
    'Event',
    namespace,
  );
  return events
    .filter((e) => e.type === 'Warning')
    .map((e) => `${e.involvedObject?.kind} ${e.involvedObject?.name}: ${e.reason}: ${e.message}`)
    .slice(-3)
    .join(' | ');
}

/**
 * A pod of the workload's current revision that is not one of `before` (pods that existed when
 * the change was complete): the controller created it since, and the API server admitted it
 * against the objects as they are now. Pods of the current revision among `before` (a rollback
 * reuses its ReplicaSet; a pod made while helm was still at work) are deleted first; unscheduled
 * pods go at once, and their controller makes new ones.
 */
export async function newPodOf(
  client: KubeClient,
  kind: WorkloadKind,
  name: string,
  namespace: string,
  before: ReadonlySet<string>,
  timeoutMs = 30_000,
): Promise<Pod> {
  let seen = '';
  const deleted = new Set<string>();
  return pollFor(
    `a new pod of ${kind} ${name} in ${namespace}`,
    async () => {
      const revision = await currentRevision(client, kind, name, namespace);
      if (typeof revision === 'string') {
        seen = revision;
        return undefined;
      }
      const pods = (await client.list<Pod>('v1', 'Pod', namespace)).filter(
        (pod) => ownedBy(pod, revision.owner) && pod.metadata.labels?.[revision.label] === revision.hash,
      );
      for (const pod of pods.filter((p) => before.has(p.metadata.uid ?? '') && !deleted.has(p.metadata.uid ?? ''))) {
        deleted.add(pod.metadata.uid ?? '');
        // Already gone is as good: the controller replaces it either way.
        await client.send('DELETE', `/api/v1/namespaces/${namespace}/pods/${pod.metadata.name}`);
      }
      const fresh = pods.find((pod) => !before.has(pod.metadata.uid ?? ''));
      if (fresh === undefined) seen = `${revision.label} ${revision.hash}: no new pod; warnings: ${await warnings(client, namespace)}`;
      return fresh;
    },
    { timeoutMs, everyMs: 200, lastSeen: () => seen },
  );
}

/** The UIDs of every pod in the namespace now. */
export async function podUids(client: KubeClient, namespace: string): Promise<Set<string>> {
  return new Set((await client.list<Pod>('v1', 'Pod', namespace)).map((pod) => pod.metadata.uid ?? ''));
}

/** Waits until every pod and ReplicaSet in the namespace has a live owner: the garbage collector removed what a deleted workload left. */
export async function waitForNoOrphans(client: KubeClient, namespace: string, timeoutMs = 30_000): Promise<void> {
  let seen = '';
  await pollFor(
    `no orphaned pods or ReplicaSets in ${namespace}`,
    async () => {
      const workloads = [...(await client.list<Owned>('apps/v1', 'Deployment', namespace)), ...(await client.list<Owned>('apps/v1', 'DaemonSet', namespace))];
      const replicaSets = await client.list<Owned>('apps/v1', 'ReplicaSet', namespace);
      const owners = new Set(
        [...workloads, ...replicaSets.filter((rs) => workloads.some((w) => ownedBy(rs, w.metadata.uid)))].map((o) => o.metadata.uid ?? ''),
      );
      const pods = await client.list<Owned>('v1', 'Pod', namespace);
      const orphaned = (o: Owned): boolean => !(o.metadata.ownerReferences ?? []).some((owner) => owners.has(owner.uid));
      const orphans = [
        ...replicaSets.filter(orphaned).map((o) => `ReplicaSet ${o.metadata.name}`),
        ...pods.filter(orphaned).map((o) => `Pod ${o.metadata.name}`),
      ];
      seen = orphans.join(', ');
      return orphans.length === 0 ? true : undefined;
    },
    { timeoutMs, everyMs: 200, lastSeen: () => seen },
  );
}
