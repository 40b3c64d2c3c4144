// The chart's modes and the hook token, render by render: the token one value per render (Secret,
// secretKeyRef and header agree), the user's or an existing Secret's; the quiet-period and
// drain-start defaults; native mode's timeouts; hostNetwork's forced admin socket; and what the
// Kubernetes schemas can check about a native sidecar, with the pod rules they cannot.

import type { IDeployment } from 'kubernetes-models/apps/v1';
import { describe, expect, it } from 'vitest';
import { USER_HOOK_TOKEN } from '../support/chart/cases.js';
import { helmTemplate, type K8sObject, RELEASE, renderChart } from '../support/chart/helm.js';
import { findObjects, mountHolding, podSpecProblems, type RenderedPod, readPod, secretValue, validateAgainstKubernetes } from '../support/chart/manifests.js';

const FULLNAME = `${RELEASE}-envoy-shutdown-manager`;
const TOKEN_HEADER = 'X-Envoy-Shutdown-Token';

describe('the hook token', () => {
  const tokenOf = (rendered: RenderedPod): string | undefined =>
    rendered.envoy.lifecycle?.preStop?.httpGet?.httpHeaders?.find((h) => h.name === TOKEN_HEADER)?.value;

  it('is generated afresh by every render that cannot see the Secret of an earlier release, and computed once within one', async () => {
    const first = readPod(await renderChart({}));
    const second = readPod(await renderChart({}));
    expect(tokenOf(first)).not.toBe(tokenOf(second));
    for (const rendered of [first, second]) expect(secretValue(rendered.objects, `${FULLNAME}-hook-token`, 'token')).toBe(tokenOf(rendered));
  });

  it("is the user's when hookToken.value is set, under the key hookToken.secretKey names", async () => {
    const rendered = readPod(await renderChart({ values: { hookToken: { value: USER_HOOK_TOKEN, secretKey: 'hook' } } }));
    expect(tokenOf(rendered)).toBe(USER_HOOK_TOKEN);
    expect(secretValue(rendered.objects, `${FULLNAME}-hook-token`, 'hook')).toBe(USER_HOOK_TOKEN);
    expect(rendered.sidecar.env?.find((e) => e.name === 'ENVOY_SHUTDOWN_HOOK_TOKEN')?.valueFrom?.secretKeyRef).toEqual({
      name: `${FULLNAME}-hook-token`,
      key: 'hook',
    });
  });

  it('is read from an existing Secret only where the cluster can be read: helm template fails, naming the way out', async () => {
    const result = await helmTemplate({ set: ['hookToken.existingSecret=edge-token'] });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain(
      'hookToken.existingSecret: Secret proxies/edge-token cannot be read or has no key "token" (helm template and --dry-run do not read the cluster: set hookToken.value there)',
    );
  });
});

describe('helm template, mode by mode', () => {
  const env = async (options: Parameters<typeof renderChart>[0]): Promise<Readonly<Record<string, string>>> => readPod(await renderChart(options)).sidecarEnv;

  it("turns the quiet period on, keeps the 10 s floor, and waits 10 s for Envoy's hook and 15 s for a drain to start", async () => {
    expect(await env({})).toMatchObject({
      ENVOY_SHUTDOWN_QUIET_PERIOD: '5s',
      ENVOY_SHUTDOWN_IGNORE_IDLE_CONNECTIONS: 'true',
      ENVOY_SHUTDOWN_MIN_DRAIN_DURATION: '10s',
      ENVOY_SHUTDOWN_ENVOY_PRESTOP_WAIT: '10s',
      ENVOY_SHUTDOWN_DRAIN_START_TIMEOUT: '15s',
    });
  });

  it('derives the drain-start timeout from the envoy-prestop wait unless it is set, and turns the quiet period off at 0', async () => {
    expect(await env({ set: ['shutdown.envoyPrestopWait=2.5', 'shutdown.quietPeriod=0'] })).toMatchObject({
      ENVOY_SHUTDOWN_ENVOY_PRESTOP_WAIT: '2500ms',
      ENVOY_SHUTDOWN_DRAIN_START_TIMEOUT: '7500ms',
      ENVOY_SHUTDOWN_QUIET_PERIOD: '0s',
      ENVOY_SHUTDOWN_IGNORE_IDLE_CONNECTIONS: 'false', // it needs the quiet period
    });
    expect(await env({ set: ['shutdown.envoyPrestopWait=2', 'shutdown.drainStartTimeout=30'] })).toMatchObject({ ENVOY_SHUTDOWN_DRAIN_START_TIMEOUT: '30s' });
  });

  it('keeps the ready timeout at drain + 10 in native mode, whatever shutdown.readyTimeout says (nothing waits on it)', async () => {
    const rendered = readPod(await renderChart({ kubeVersion: '1.29.0', set: ['nativeSidecar=true', 'shutdown.readyTimeout=500'] }));
    expect(rendered.sidecarEnv.ENVOY_SHUTDOWN_READY_TIMEOUT).toBe('70s');
    expect(rendered.podSpec.terminationGracePeriodSeconds).toBe(90);
  });

  it('serves the admin API on the Unix socket under hostNetwork even when admin.* asks for TCP', async () => {
    const rendered = readPod(await renderChart({ set: ['hostNetwork=true', 'admin.unixSocket.enabled=false', 'admin.address=::1', 'admin.port=19000'] }));
    expect(rendered.bootstrap.admin?.address).toEqual({ pipe: { path: '/var/run/envoy-admin/admin.sock', mode: 432 } });
    expect(rendered.sidecarEnv.ENVOY_SHUTDOWN_ADMIN_ADDRESS).toBe('unix:/var/run/envoy-admin/admin.sock');
    expect(mountHolding(rendered.envoy, '/var/run/envoy-admin/admin.sock')?.name).toBe('envoy-admin');
    expect(mountHolding(rendered.sidecar, '/var/run/envoy-admin/admin.sock')?.name).toBe('envoy-admin');
  });
});

describe("Envoy's preStop httpGet host", () => {
  const hookOf = (rendered: RenderedPod): { path?: string; host?: string } | undefined => rendered.envoy.lifecycle?.preStop?.httpGet;

  it.each([
    { name: 'classic', kubeVersion: undefined, set: ['hostNetwork=true'], path: '/shutdown/ready' },
    { name: 'native', kubeVersion: '1.29.0', set: ['hostNetwork=true', 'nativeSidecar=true'], path: '/shutdown/drain' },
  ])('names the node-side loopback under hostNetwork ($name), where kubelet finds no sandbox IP', async ({ kubeVersion, set, path }) => {
    const rendered = readPod(await renderChart({ set, ...(kubeVersion === undefined ? {} : { kubeVersion }) }));
    expect(hookOf(rendered)).toMatchObject({ path, host: '127.0.0.1' });
    const ipv6 = readPod(await renderChart({ set: [...set, 'shutdownManager.hookHost=::1'], ...(kubeVersion === undefined ? {} : { kubeVersion }) }));
    expect(hookOf(ipv6)?.host).toBe('::1');
  });

  it.each([
    { name: 'classic', kubeVersion: undefined, set: [], path: '/shutdown/ready' },
    { name: 'native', kubeVersion: '1.29.0', set: ['nativeSidecar=true'], path: '/shutdown/drain' },
  ])('names none on a pod-network pod ($name), whose hook goes to the pod IP (127.0.0.1 would be the node)', async ({ kubeVersion, set, path }) => {
    const rendered = readPod(await renderChart({ set: [...set, 'shutdownManager.hookHost=127.0.0.2'], ...(kubeVersion === undefined ? {} : { kubeVersion }) }));
    expect(hookOf(rendered)?.path).toBe(path);
    expect(hookOf(rendered)).not.toHaveProperty('host');
  });

  it('takes only a loopback address', async () => {
    const result = await helmTemplate({ set: ['hostNetwork=true', 'shutdownManager.hookHost=10.0.0.1'] });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('shutdownManager.hookHost');
  });
});

describe('what the Kubernetes schemas can and cannot check', () => {
  const deployment = (objects: readonly K8sObject[]): IDeployment & K8sObject =>
    findObjects<IDeployment & K8sObject>(objects, 'Deployment')[0] as IDeployment & K8sObject;
  const withSpec = (objects: readonly K8sObject[], change: (d: IDeployment) => void): K8sObject[] => {
    const copy = structuredClone(objects) as K8sObject[];
    change(deployment(copy));
    return copy;
  };

  it('validates the native sidecar too: kubernetes-models reaches the init containers', async () => {
    const objects = await renderChart({ kubeVersion: '1.29.0', set: ['nativeSidecar=true'] });
    expect(() => validateAgainstKubernetes(objects)).not.toThrow();
    const broken = withSpec(objects, (d) => {
      const sidecar = d.spec?.template.spec?.initContainers?.[0] as unknown as Record<string, unknown>;
      sidecar.ports = [{ containerPort: 'not a number' }];
    });
    expect(() => validateAgainstKubernetes(broken)).toThrow(/initContainers\/0\/ports\/0\/containerPort/);
  });

  it("adds the API server's pod rules the schemas lack: restartPolicy, hooks and probes on init containers, host ports", async () => {
    const objects = await renderChart({ kubeVersion: '1.29.0', set: ['nativeSidecar=true', 'hostNetwork=true'] });
    expect(podSpecProblems(deployment(objects).spec?.template.spec ?? { containers: [] })).toEqual([]);
    const broken = withSpec(objects, (d) => {
      const spec = d.spec?.template.spec;
      const [sidecar] = spec?.initContainers ?? [];
      const [envoy] = spec?.containers ?? [];
      if (spec === undefined || sidecar === undefined || envoy === undefined) throw new Error('no pod spec');
      sidecar.restartPolicy = 'OnFailure'; // its probes are then those of a plain init container
      envoy.restartPolicy = 'Always';
      envoy.ports = [...(envoy.ports ?? []), { name: 'dup', containerPort: Number(sidecar.ports?.[0]?.containerPort) }];
    });
    const problems = podSpecProblems(deployment(broken).spec?.template.spec ?? { containers: [] });
    expect([...problems].sort()).toEqual(
      [
        'initContainers[shutdown-manager]: restartPolicy must be Always, not OnFailure',
        'initContainers[shutdown-manager]: startupProbe is only allowed on an init container with restartPolicy Always',
        'initContainers[shutdown-manager]: readinessProbe is only allowed on an init container with restartPolicy Always',
        'containers[envoy]: restartPolicy may only be set on init containers',
        'envoy: host port 19002/TCP is also declared by shutdown-manager',
      ].sort(),
    );
    expect(() => validateAgainstKubernetes(broken)).toThrow(/restartPolicy may only be set on init containers/);
  });
});
