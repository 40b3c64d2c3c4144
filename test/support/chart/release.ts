// A helm release as the API server holds it: the objects helm recorded for one revision (what
// `helm get manifest --revision N` prints, read from helm's release Secret), the objects of the
// release that are stored but no longer in it, and the objects a pod refers to by name.
import { gunzipSync } from 'node:zlib';
import type { KubeClient, KubeObject } from '../kube/client.js';
import type { Pod } from '../kube/rollout.js';
import { type K8sObject, parseManifests } from './helm.js';

/** The objects helm recorded for the release's revision. */
export async function releaseManifest(client: KubeClient, namespace: string, release: string, revision = 1): Promise<K8sObject[]> {
  const secret = await client.get<KubeObject & { data?: { release?: string } }>('v1', 'Secret', `sh.helm.release.v1.${release}.v${revision}`, namespace);
  if (secret?.data?.release === undefined) throw new Error(`no release Secret of ${release} v${revision} in ${namespace}`);
  // Kubernetes' base64 around helm's base64 around gzipped JSON.
  const decoded = JSON.parse(gunzipSync(Buffer.from(Buffer.from(secret.data.release, 'base64').toString('utf8'), 'base64')).toString('utf8')) as {
    manifest?: string;
  };
  return parseManifests(decoded.manifest ?? '');
}

/** Every kind the chart can make, at the version it renders. */
const CHART_KINDS: readonly (readonly [string, string])[] = [
  ['v1', 'ServiceAccount'],
  ['v1', 'ConfigMap'],
  ['v1', 'Secret'],
  ['v1', 'Service'],
  ['rbac.authorization.k8s.io/v1', 'Role'],
  ['rbac.authorization.k8s.io/v1', 'RoleBinding'],
  ['apps/v1', 'Deployment'],
  ['apps/v1', 'DaemonSet'],
  ['policy/v1', 'PodDisruptionBudget'],
  ['autoscaling/v2', 'HorizontalPodAutoscaler'],
  ['monitoring.coreos.com/v1', 'PodMonitor'],
];

/** Objects labelled as the release's that its manifest no longer has: what an upgrade left behind. */
export async function leftovers(client: KubeClient, namespace: string, release: string, manifest: readonly K8sObject[]): Promise<string[]> {
  const wanted = new Set(manifest.map((o) => `${o.kind} ${o.metadata.name}`));
  const stored = await Promise.all(
    CHART_KINDS.map(async ([apiVersion, kind]) =>
      (await client.list(apiVersion, kind, namespace))
        .filter((o) => o.metadata.labels?.['app.kubernetes.io/instance'] === release)
        .map((o) => `${kind} ${o.metadata.name}`),
    ),
  );
  return stored.flat().filter((name) => !wanted.has(name));
}

/** The objects the pod names: its ServiceAccount, and every ConfigMap and Secret of its volumes, environment and pull secrets. */
export function podReferences(pod: Pod): { kind: 'ServiceAccount' | 'ConfigMap' | 'Secret'; name: string }[] {
  const refs: { kind: 'ServiceAccount' | 'ConfigMap' | 'Secret'; name: string }[] = [
    { kind: 'ServiceAccount', name: pod.spec.serviceAccountName ?? 'default' },
  ];
  for (const volume of pod.spec.volumes ?? []) {
    if (volume.configMap !== undefined) refs.push({ kind: 'ConfigMap', name: volume.configMap.name });
    if (volume.secret !== undefined) refs.push({ kind: 'Secret', name: volume.secret.secretName });
    for (const source of volume.projected?.sources ?? []) {
      if (source.configMap !== undefined) refs.push({ kind: 'ConfigMap', name: source.configMap.name });
      if (source.secret !== undefined) refs.push({ kind: 'Secret', name: source.secret.name });
    }
  }
  for (const container of [...pod.spec.containers, ...(pod.spec.initContainers ?? [])]) {
    for (const env of container.env ?? []) {
      if (env.valueFrom?.secretKeyRef !== undefined) refs.push({ kind: 'Secret', name: env.valueFrom.secretKeyRef.name });
      if (env.valueFrom?.configMapKeyRef !== undefined) refs.push({ kind: 'ConfigMap', name: env.valueFrom.configMapKeyRef.name });
    }
  }
  for (const secret of pod.spec.imagePullSecrets ?? []) refs.push({ kind: 'Secret', name: secret.name });
  return refs;
}
