// `helm install` against a real Kubernetes API server (test/support/kube/), mode by mode, in a
// namespace where Pod Security admission enforces `restricted` (hostNetwork, which the chart
// documents as needing `privileged`, in a privileged one). The server stores and admits objects but
// runs nothing (no scheduler, controllers or kubelet), so a Deployment's pods never exist: each
// workload's pod template is also sent as a Pod in a server-side dry run, which gets Pod Security's
// real enforce decision. `helm test` runs for real: its Pod is created and admitted, and the test
// then reports the Pod's phase as kubelet would once the status check exited 0.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CASES, SIDECARLESS_CASES } from '../support/chart/cases.js';
import { CHART_DIR, helm, helmWithValues, RELEASE, type RenderOptions } from '../support/chart/helm.js';
import { releaseManifest } from '../support/chart/release.js';
import { type ApiServer, startApiServer } from '../support/kube/api-server.js';
import { kubeVersion } from '../support/kube/binary.js';
import { KubeApiError, type KubeObject } from '../support/kube/client.js';
import { createNamespace } from '../support/kube/resources.js';

const FULLNAME = `${RELEASE}-envoy-shutdown-manager`;
const TEST_POD = `${FULLNAME}-test-status`;

interface Install extends RenderOptions {
  readonly name: string;
}

interface Workload extends KubeObject {
  readonly spec: { readonly template: { readonly metadata: { readonly labels?: Record<string, string> }; readonly spec: Record<string, unknown> } };
}

const INSTALLS: readonly Install[] = [
  ...CASES,
  ...SIDECARLESS_CASES,
  { name: 'DaemonSet', set: ['kind=DaemonSet'] },
  { name: 'DaemonSet, native sidecar, hostNetwork', set: ['kind=DaemonSet', 'nativeSidecar=true', 'hostNetwork=true'] },
  { name: 'DaemonSet, sidecar-less', set: ['kind=DaemonSet', 'mode=sidecarless'] },
  // A ServiceAccount, a Role and its binding, a projected token in the manager's container.
  { name: 'events', set: ['events.enabled=true'] },
  { name: 'events, native sidecar', set: ['events.enabled=true', 'nativeSidecar=true'] },
];

const usesHostNetwork = (install: Install): boolean => install.values?.hostNetwork === true || (install.set ?? []).includes('hostNetwork=true');

let server: ApiServer;
let namespaces = 0;

/** A fresh namespace at the level the install needs. */
async function namespaceFor(level: 'restricted' | 'privileged'): Promise<string> {
  namespaces += 1;
  const name = `${level}-${namespaces}`;
  await createNamespace(server.admin, name, level);
  return name;
}

async function helmInstall(install: Install, namespace: string): ReturnType<typeof helm> {
  return helmWithValues(['install', RELEASE, CHART_DIR, '--namespace', namespace, '--kubeconfig', server.kubeconfig, '--timeout', '60s'], install);
}

/** The workload's pod template as a Pod of its own, for a dry-run create. */
function podFrom(workload: Workload, namespace: string): KubeObject {
  const { template } = workload.spec;
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'from-template', namespace, labels: template.metadata.labels ?? {} }, spec: template.spec };
}

async function workloadOf(install: Install, namespace: string): Promise<Workload> {
  const kind = (install.set ?? []).includes('kind=DaemonSet') ? 'DaemonSet' : 'Deployment';
  const workload = await server.admin.get<Workload>('apps/v1', kind, FULLNAME, namespace);
  if (workload === undefined) throw new Error(`no ${kind} ${FULLNAME} in ${namespace}`);
  return workload;
}

/** What rejected `attempt`: the API server's message (a success fails the test). */
async function rejection(attempt: Promise<unknown>): Promise<string> {
  const error = await attempt.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof KubeApiError)) throw new Error(`expected the API server to refuse, got ${String(error)}`);
  return `${error.status} ${error.message}`;
}

/** Runs `helm test`, and plays kubelet's part once its Pod is stored: the status check exited 0. */
async function helmTestPlayingKubelet(namespace: string): Promise<{ pod: KubeObject; result: Awaited<ReturnType<typeof helm>> }> {
  const running = helm(['test', RELEASE, '--namespace', namespace, '--kubeconfig', server.kubeconfig, '--timeout', '60s']);
  const pod = await server.admin.waitFor<KubeObject & { status?: Record<string, unknown> }>('v1', 'Pod', namespace, (p) => p.metadata.name === TEST_POD);
  await server.admin.call('PUT', `/api/v1/namespaces/${namespace}/pods/${TEST_POD}/status`, { ...pod, status: { ...pod.status, phase: 'Succeeded' } });
  return { pod, result: await running };
}

beforeAll(async () => {
  server = await startApiServer();
}, 150_000);

afterAll(async () => {
  await server?.stop();
});

describe('the API server the chart is installed against', () => {
  it('is kube-apiserver at the pinned version', async () => {
    const version = (await server.admin.call('GET', '/version')).body as { gitVersion?: string };
    expect(version.gitVersion).toBe(kubeVersion());
  });

  it('enforces Pod Security: a pod that breaks "restricted" is refused, naming what it breaks (the control the install checks rely on)', async () => {
    const namespace = await namespaceFor('restricted');
    const pod: KubeObject = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'root', namespace },
      spec: { containers: [{ name: 'c', image: 'example.test/c:1' }] },
    };
    const refused = await rejection(server.admin.create(pod, { dryRun: true }));
    expect(refused).toContain('403');
    expect(refused).toContain('violates PodSecurity "restricted:latest"');
    expect(refused).toContain('runAsNonRoot != true');
  });
});

describe('helm install against a real API server', () => {
  // Concurrent: each install waits on helm and the API server more than on a core.
  it.concurrent.for(INSTALLS)(
    "installs $name: every object stored, the pod admitted without a warning, helm test's Pod created",
    { timeout: 120_000 },
    async (install, { expect }) => {
      const hostNetwork = usesHostNetwork(install);
      const namespace = await namespaceFor(hostNetwork ? 'privileged' : 'restricted');
      const installed = await helmInstall(install, namespace);
      expect(installed.stderr).toBe('');
      expect(installed.code).toBe(0);

      const objects = await releaseManifest(server.admin, namespace, RELEASE);
      expect(objects.map((o) => o.kind)).toEqual(
        expect.arrayContaining(['ConfigMap', 'Service', (install.set ?? []).includes('kind=DaemonSet') ? 'DaemonSet' : 'Deployment']),
      );
      for (const object of objects) {
        expect(await server.admin.get(object.apiVersion, object.kind, object.metadata.name, namespace), `${object.kind} ${object.metadata.name}`).toBeDefined();
      }

      const pod = podFrom(await workloadOf(install, namespace), namespace);
      const admitted = await server.admin.create(pod, { dryRun: true });
      expect(admitted.warnings).toEqual([]);
      if (hostNetwork) {
        // As documented: such a pod needs a privileged namespace; "restricted" refuses it.
        const restricted = await namespaceFor('restricted');
        const refused = await rejection(server.admin.create({ ...pod, metadata: { ...pod.metadata, namespace: restricted } }, { dryRun: true }));
        expect(refused).toContain('violates PodSecurity "restricted:latest": host namespaces (hostNetwork=true)');
      }

      const { pod: testPod, result } = await helmTestPlayingKubelet(namespace);
      expect(testPod.metadata.labels?.['app.kubernetes.io/component']).toBe('test');
      expect(result.stderr).toBe('');
      expect(result.stdout).toMatch(new RegExp(`TEST SUITE:\\s+${TEST_POD}[\\s\\S]*Phase:\\s+Succeeded`));
      expect(result.code).toBe(0);
      // hook-delete-policy hook-succeeded: helm removes the test Pod once it passed.
      expect(await server.admin.get('v1', 'Pod', TEST_POD, namespace)).toBeUndefined();
    },
  );

  it("warns when a workload's pods would break the namespace's level (the check above can fail): hostNetwork in a restricted namespace", async () => {
    const namespace = await namespaceFor('restricted');
    const installed = await helmInstall({ name: 'hostNetwork', set: ['hostNetwork=true'] }, namespace);
    expect(installed.stderr).toContain('would violate PodSecurity "restricted:latest": host namespaces (hostNetwork=true)');
  });
});
