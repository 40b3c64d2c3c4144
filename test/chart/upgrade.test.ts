// `helm upgrade` and `helm rollback` between the chart's configurations, on a real API server with
// kube-controller-manager running: after every step the workload's controller must create a pod of
// the new revision, which the API server admits (ServiceAccount admission; Pod Security at the
// level the chart documents), whose template holds nothing the new values did not render, and
// every object that pod names must exist; the PodDisruptionBudget and the Service must select it,
// and nothing labelled as the release may be left that its manifest no longer has. No kubelet or
// scheduler runs: pods stay Pending, so a rollout is seen by the pod it creates, never by its end.
import { afterAll, beforeAll, describe, type ExpectStatic, it } from 'vitest';
import { CHART_DIR, helm, helmWithValues, type K8sObject } from '../support/chart/helm.js';
import { leftovers, podReferences, releaseManifest } from '../support/chart/release.js';
import { type ApiServer, startApiServer } from '../support/kube/api-server.js';
import type { KubeObject } from '../support/kube/client.js';
import { ROOT_CA_CONFIGMAP } from '../support/kube/controllers.js';
import { createNamespace, createServiceAccount } from '../support/kube/resources.js';
import { newPodOf, type Pod, type PodSpec, podUids, type Workload, type WorkloadKind, waitForNoOrphans } from '../support/kube/rollout.js';
import { pollUntil } from '../support/poll.js';

const RELEASE = 'rig';
const FULLNAME = `${RELEASE}-envoy-shutdown-manager`;
/** A ServiceAccount of the user's, made by the test in every namespace. */
const USER_ACCOUNT = 'mine';
/** Every configuration has the budget, to check what it selects (the chart's two replicas leave it room). */
const BASE = ['podDisruptionBudget.enabled=true'];

interface Config {
  readonly name: string;
  readonly set: readonly string[];
}

const DEFAULTS: Config = { name: 'defaults (classic sidecar)', set: [] };
const NATIVE: Config = { name: 'native sidecar', set: ['nativeSidecar=true'] };
const SIDECARLESS: Config = { name: 'sidecar-less', set: ['mode=sidecarless'] };
const SIDECARLESS_IMAGE: Config = { name: 'sidecar-less from an image volume', set: ['mode=sidecarless', 'sidecarless.source=imageVolume'] };
const EVENTS: Config = { name: 'events on', set: ['events.enabled=true'] };
const EVENTS_NATIVE: Config = { name: 'events on, native sidecar', set: ['events.enabled=true', 'nativeSidecar=true'] };
const HOST_NETWORK: Config = { name: 'hostNetwork', set: ['hostNetwork=true'] };
const DAEMONSET: Config = { name: 'DaemonSet', set: ['kind=DaemonSet'] };
const DAEMONSET_HOST_NETWORK: Config = { name: 'DaemonSet, hostNetwork, native sidecar', set: ['kind=DaemonSet', 'hostNetwork=true', 'nativeSidecar=true'] };
const UNIX_SOCKET: Config = { name: 'admin on a Unix socket', set: ['admin.unixSocket.enabled=true'] };
const USER_SA: Config = { name: "the user's ServiceAccount", set: [`serviceAccountName=${USER_ACCOUNT}`] };
const EVENTS_USER_SA: Config = { name: "events on, the user's ServiceAccount", set: ['events.enabled=true', `serviceAccountName=${USER_ACCOUNT}`] };
const POD_MONITOR: Config = { name: 'PodMonitor on', set: ['metrics.podMonitor.enabled=true', 'metrics.podMonitor.envoyStats=true'] };

/** Each pair is walked both ways by upgrade and both ways by rollback. */
const PAIRS: readonly (readonly [Config, Config])[] = [
  [EVENTS, DEFAULTS],
  [DEFAULTS, NATIVE],
  [NATIVE, SIDECARLESS],
  [DEFAULTS, SIDECARLESS],
  // The executable's volume keeps its name and changes its source: emptyDir <-> image.
  [SIDECARLESS, SIDECARLESS_IMAGE],
  [EVENTS_NATIVE, SIDECARLESS],
  [DEFAULTS, HOST_NETWORK],
  [DEFAULTS, DAEMONSET],
  [DAEMONSET, DAEMONSET_HOST_NETWORK],
  [DEFAULTS, UNIX_SOCKET],
  [DEFAULTS, USER_SA],
  [USER_SA, EVENTS],
  [EVENTS, EVENTS_USER_SA],
  [EVENTS, DAEMONSET],
  [DEFAULTS, POD_MONITOR],
];

type Step =
  | { readonly action: 'install' | 'upgrade'; readonly config: Config }
  | { readonly action: 'rollback'; readonly revision: number; readonly config: Config };

/** a, a → b, b → a, then back by rollback: b (revision 2), a (revision 1). */
const walk = (a: Config, b: Config): Step[] => [
  { action: 'install', config: a },
  { action: 'upgrade', config: b },
  { action: 'upgrade', config: a },
  { action: 'rollback', revision: 2, config: b },
  { action: 'rollback', revision: 1, config: a },
];

const usesHostNetwork = (config: Config): boolean => config.set.includes('hostNetwork=true');

let server: ApiServer;
let namespaces = 0;

/** A fresh namespace as a cluster has it: Pod Security at `level`, the default and the user's ServiceAccounts, the root CA ConfigMap. */
async function namespaceFor(level: 'restricted' | 'privileged'): Promise<string> {
  namespaces += 1;
  const name = `${level}-${namespaces}`;
  await createNamespace(server.admin, name, level);
  await createServiceAccount(server.admin, name, USER_ACCOUNT);
  await server.admin.waitFor('v1', 'ConfigMap', name, (c) => c.metadata.name === ROOT_CA_CONFIGMAP);
  return name;
}

async function runStep(step: Step, namespace: string): ReturnType<typeof helm> {
  const common = ['--namespace', namespace, '--kubeconfig', server.kubeconfig, '--timeout', '60s'];
  if (step.action === 'rollback') return helm(['rollback', RELEASE, String(step.revision), ...common]);
  return helmWithValues([step.action, RELEASE, CHART_DIR, ...common], { set: [...BASE, ...step.config.set] });
}

/** The fields an upgrade's merge patch can leave stale (aliases and defaults the API server fills in), as a pod should hold them. */
function mergeTraps(spec: PodSpec): Record<string, unknown> {
  const hostNetwork = spec.hostNetwork === true;
  const names = (list: readonly { name: string }[] | undefined): string[] => (list ?? []).map((item) => item.name);
  return {
    serviceAccountName: spec.serviceAccountName ?? 'default',
    automountServiceAccountToken: spec.automountServiceAccountToken ?? true,
    hostNetwork,
    dnsPolicy: spec.dnsPolicy ?? 'ClusterFirst',
    containers: names(spec.containers),
    initContainers: names(spec.initContainers),
    // Each volume's name and source (a stale second source would be refused).
    volumes: (spec.volumes ?? [])
      .map(
        (v) =>
          `${v.name}:${Object.keys(v)
            .filter((key) => key !== 'name')
            .sort()
            .join('+')}`,
      )
      .sort(),
    // With hostNetwork the API server fills in a pod's hostPort = containerPort (a template's it leaves alone).
    ports: [...spec.containers, ...(spec.initContainers ?? [])].flatMap((c) =>
      (c.ports ?? []).map((p) => `${c.name}/${p.containerPort}:${p.hostPort ?? (hostNetwork ? p.containerPort : 0)}`),
    ),
  };
}

const selects = (selector: Record<string, string> | undefined, labels: Record<string, string> | undefined): boolean =>
  selector !== undefined && Object.keys(selector).length > 0 && Object.entries(selector).every(([key, value]) => labels?.[key] === value);

/** Everything checked after a step; the step's label prefixes every failure. */
async function checkStep(expect: ExpectStatic, label: string, namespace: string, revision: number, before: ReadonlySet<string>): Promise<void> {
  const manifest = await releaseManifest(server.admin, namespace, RELEASE, revision);
  const workload = manifest.find((o): o is K8sObject & Workload => o.kind === 'Deployment' || o.kind === 'DaemonSet');
  if (workload === undefined) throw new Error(`${label}: no workload in the release manifest`);
  const pod: Pod = await newPodOf(server.admin, workload.kind as WorkloadKind, FULLNAME, namespace, before).catch((error: unknown) => {
    throw new Error(`${label}: ${(error as Error).message}`);
  });
  const rendered = workload.spec.template.spec;
  expect(mergeTraps(pod.spec), `${label}: the new pod's spec against the render`).toEqual(mergeTraps(rendered));
  // The deprecated alias, which the API server fills from serviceAccountName (and the other way round).
  expect(pod.spec.serviceAccount, `${label}: the pod's serviceAccount alias`).toBe(rendered.serviceAccountName ?? 'default');

  for (const ref of podReferences(pod)) {
    expect(await server.admin.get('v1', ref.kind, ref.name, namespace), `${label}: ${ref.kind} ${ref.name}, which the pod names`).toBeDefined();
  }
  const budget = manifest.find((o) => o.kind === 'PodDisruptionBudget') as
    | (K8sObject & { spec: { selector: { matchLabels?: Record<string, string> } } })
    | undefined;
  const service = manifest.find((o) => o.kind === 'Service') as (K8sObject & { spec: { selector?: Record<string, string> } }) | undefined;
  expect(selects(budget?.spec.selector.matchLabels, pod.metadata.labels), `${label}: the PodDisruptionBudget selects the new pod`).toBe(true);
  expect(selects(service?.spec.selector, pod.metadata.labels), `${label}: the Service selects the new pod`).toBe(true);

  expect(await leftovers(server.admin, namespace, RELEASE, manifest), `${label}: objects of the release its manifest no longer has`).toEqual([]);
  const accounts = new Set((await server.admin.list('v1', 'ServiceAccount', namespace)).map((a) => a.metadata.name));
  for (const binding of await server.admin.list<KubeObject & { subjects?: { kind: string; name: string }[] }>(
    'rbac.authorization.k8s.io/v1',
    'RoleBinding',
    namespace,
  )) {
    for (const subject of (binding.subjects ?? []).filter((s) => s.kind === 'ServiceAccount')) {
      expect(accounts.has(subject.name), `${label}: RoleBinding ${binding.metadata.name} binds ServiceAccount ${subject.name}`).toBe(true);
    }
  }
  await waitForNoOrphans(server.admin, namespace);
}

/** PodMonitor's CRD as the Prometheus Operator installs it, reduced to what storing one needs. */
async function installPodMonitorCrd(): Promise<void> {
  const name = 'podmonitors.monitoring.coreos.com';
  await server.admin.create({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name },
    spec: {
      group: 'monitoring.coreos.com',
      scope: 'Namespaced',
      names: { kind: 'PodMonitor', listKind: 'PodMonitorList', plural: 'podmonitors', singular: 'podmonitor' },
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
    },
  });
  await pollUntil(
    `CRD ${name} established`,
    async () => {
      const crd = await server.admin.get<KubeObject & { status?: { conditions?: { type: string; status: string }[] } }>(
        'apiextensions.k8s.io/v1',
        'CustomResourceDefinition',
        name,
      );
      return (crd?.status?.conditions ?? []).some((c) => c.type === 'Established' && c.status === 'True');
    },
    { everyMs: 100 },
  );
}

beforeAll(async () => {
  server = await startApiServer({ controllers: true });
  // A node for the DaemonSet controller to put a pod on (nothing runs there: no kubelet). The API
  // server taints a new node not-ready until its kubelet reports; here no kubelet ever will.
  await server.admin.create({
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: 'node-a', labels: { 'kubernetes.io/hostname': 'node-a', 'kubernetes.io/os': 'linux' } },
  });
  await server.admin.call('PATCH', '/api/v1/nodes/node-a', { spec: { taints: null } }, 'application/merge-patch+json');
  await installPodMonitorCrd();
}, 150_000);

afterAll(async () => {
  await server?.stop();
});

describe('the controllers beside the API server', () => {
  it("create no pod whose ServiceAccount is missing, and say why in a Warning event (the refusal every step's wait would meet)", async ({ expect }) => {
    const namespace = await namespaceFor('restricted');
    const labels = { app: 'no-account' };
    await server.admin.create({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'no-account', namespace },
      spec: {
        replicas: 1,
        selector: { matchLabels: labels },
        template: {
          metadata: { labels },
          spec: {
            serviceAccountName: 'missing',
            automountServiceAccountToken: false,
            securityContext: { runAsNonRoot: true, runAsUser: 65532, seccompProfile: { type: 'RuntimeDefault' } },
            containers: [{ name: 'c', image: 'example.test/c:1', securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } } }],
          },
        },
      },
    });
    const event = await server.admin.waitFor<KubeObject & { reason?: string; message?: string }>('v1', 'Event', namespace, (e) => e.reason === 'FailedCreate');
    expect(event.message).toContain('error looking up service account');
    expect(event.message).toContain('serviceaccount "missing" not found');
    expect(await server.admin.list('v1', 'Pod', namespace)).toEqual([]);
  });
});

describe('helm upgrade and rollback between configurations, with the controllers running', () => {
  // Concurrent: each walk waits on helm, the API server and the controllers more than on a core.
  it.concurrent.for(PAIRS.map(([a, b]) => ({ a, b, name: `${a.name} <-> ${b.name}` })))(
    '$name: every step creates an admitted pod of the new revision, with no stale reference or leftover',
    { timeout: 150_000 },
    async ({ a, b }, { expect }) => {
      const namespace = await namespaceFor(usesHostNetwork(a) || usesHostNetwork(b) ? 'privileged' : 'restricted');
      let revision = 0;
      for (const step of walk(a, b)) {
        revision += 1;
        const label = `${step.action} to ${step.config.name} (revision ${revision}, ${namespace})`;
        const result = await runStep(step, namespace);
        expect(result.stderr, `${label}: helm's stderr`).toBe('');
        expect(result.code, `${label}: helm's exit code`).toBe(0);
        // Taken once helm is done: a pod the controller made while helm was still deleting the old
        // configuration's objects proves nothing, so it counts as old and is made again.
        const before = await podUids(server.admin, namespace);
        await checkStep(expect, label, namespace, revision, before);
      }
    },
  );
});
