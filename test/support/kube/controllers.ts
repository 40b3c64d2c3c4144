// kube-controller-manager beside the tests' API server, with only the controllers that turn the
// chart's workloads into pods: Deployments make ReplicaSets, ReplicaSets and DaemonSets make Pods
// (which the API server admits or refuses as on a real cluster: ServiceAccount admission, Pod
// Security), the garbage collector removes what a deleted owner leaves, and every namespace gets
// the `kube-root-ca.crt` ConfigMap that projected service-account volumes read. No scheduler and no
// kubelet: pods stay Pending, so a rollout never finishes.

/** Controller names as kube-controller-manager 1.33 knows them. */
const CONTROLLERS = [
  'deployment-controller',
  'replicaset-controller',
  'daemonset-controller',
  'garbage-collector-controller',
  'root-ca-certificate-publisher-controller',
] as const;

export interface ControllerManagerFiles {
  /** An admin kubeconfig for the API server. */
  readonly kubeconfig: string;
  /** The CA the root-ca publisher puts in every namespace's kube-root-ca.crt. */
  readonly caFile: string;
  readonly featureGates: string;
}

export function controllerManagerArgs(files: ControllerManagerFiles): string[] {
  return [
    '--kubeconfig',
    files.kubeconfig,
    '--controllers',
    CONTROLLERS.join(','),
    '--root-ca-file',
    files.caFile,
    // One instance, nothing to elect; no serving port: nothing but the API server talks to it.
    '--leader-elect=false',
    '--secure-port=0',
    '--bind-address',
    '127.0.0.1',
    '--feature-gates',
    files.featureGates,
    '--profiling=false',
  ];
}

/** The namespace whose kube-root-ca.crt shows the controllers are running (the API server makes it at start). */
export const CONTROLLERS_READY_NAMESPACE = 'default';
export const ROOT_CA_CONFIGMAP = 'kube-root-ca.crt';
