// The objects tests set up on the API server: a namespace at a Pod Security level, service
// accounts, a Role bound to one, and a service-account token minted with TokenRequest.
import type { KubeClient, KubeObject } from './client.js';

export type PodSecurityLevel = 'privileged' | 'baseline' | 'restricted';

export interface PolicyRule {
  readonly apiGroups: readonly string[];
  readonly resources: readonly string[];
  readonly verbs: readonly string[];
}

/**
 * A namespace whose Pod Security admission enforces, audits and warns at `level` (latest version),
 * with its `default` ServiceAccount: the ServiceAccount admission refuses pods whose account is
 * missing, and no controller-manager runs here to create it.
 */
export async function createNamespace(client: KubeClient, name: string, level: PodSecurityLevel): Promise<void> {
  const labels = Object.fromEntries(
    ['enforce', 'audit', 'warn'].flatMap((mode) => [
      [`pod-security.kubernetes.io/${mode}`, level],
      [`pod-security.kubernetes.io/${mode}-version`, 'latest'],
    ]),
  );
  await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels } });
  await createServiceAccount(client, name, 'default');
}

export async function createServiceAccount(client: KubeClient, namespace: string, name: string): Promise<void> {
  await client.create({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, namespace } });
}

/** A Role with `rules`, bound to the service account `serviceAccount` under the same name. */
export async function grantRole(client: KubeClient, namespace: string, serviceAccount: string, name: string, rules: readonly PolicyRule[]): Promise<void> {
  await client.create({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name, namespace }, rules });
  await client.create({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name, namespace },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
    subjects: [{ kind: 'ServiceAccount', name: serviceAccount, namespace }],
  });
}

/** A bound token for the service account (TokenRequest), as kubelet projects into a pod; 10 minutes by default. */
export async function serviceAccountToken(client: KubeClient, namespace: string, serviceAccount: string, expirationSeconds = 600): Promise<string> {
  const request: KubeObject = {
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'TokenRequest',
    metadata: { name: serviceAccount, namespace },
    spec: { expirationSeconds },
  };
  const response = await client.call('POST', `/api/v1/namespaces/${namespace}/serviceaccounts/${serviceAccount}/token`, request);
  const token = (response.body as { status?: { token?: string } }).status?.token;
  if (token === undefined) throw new Error(`TokenRequest for ${namespace}/${serviceAccount} returned no token`);
  return token;
}
