// The workload the chart runs its pods as: a Deployment or a DaemonSet with the same pod, a rollout
// strategy that can progress with host ports, and the chart metadata users look for.
import { readFileSync } from 'node:fs';
import type { IDaemonSet, IDeployment } from 'kubernetes-models/apps/v1';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { helmTemplate, renderChart } from '../support/chart/helm.js';
import { findObjects, readPod, validateAgainstKubernetes } from '../support/chart/manifests.js';

describe('kind', () => {
  it('DaemonSet renders the same pod as the Deployment, with no replicas and no autoscaler', async () => {
    // A fixed token: a generated one differs between renders.
    const token = ['hookToken.value=workload-test-token-0123'];
    const deployment = readPod(await renderChart({ set: token }));
    const objects = await renderChart({ set: [...token, 'kind=DaemonSet'] });
    validateAgainstKubernetes(objects);
    const [daemonSet] = findObjects<IDaemonSet>(objects, 'DaemonSet');
    expect(findObjects(objects, 'Deployment')).toEqual([]);
    expect(daemonSet?.spec?.template).toEqual(deployment.deployment.spec?.template);
    expect(daemonSet?.spec?.selector).toEqual(deployment.deployment.spec?.selector);
    expect(daemonSet?.spec).not.toHaveProperty('replicas');
    expect(readPod(objects).workloadKind).toBe('DaemonSet');
  });

  it('refuses autoscaling, and a Deployment-only strategy, with a DaemonSet', async () => {
    const result = await helmTemplate({ set: ['kind=DaemonSet', 'autoscaling.enabled=true', 'updateStrategy.type=Recreate'] });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('autoscaling.enabled needs kind Deployment');
    expect(result.stderr).toContain('updateStrategy.type Recreate is a Deployment strategy');
    expect((await helmTemplate({ set: ['kind=StatefulSet'] })).stderr).toContain('kind');
  });
});

describe('rollout strategy', () => {
  const strategyOf = async (set: string[]): Promise<unknown> => {
    const objects = await renderChart({ set });
    if (set.includes('kind=DaemonSet')) return findObjects<IDaemonSet>(objects, 'DaemonSet')[0]?.spec?.updateStrategy;
    return findObjects<IDeployment>(objects, 'Deployment')[0]?.spec?.strategy;
  };
  const surge = { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } };
  const inPlace = { type: 'RollingUpdate', rollingUpdate: { maxSurge: 0, maxUnavailable: 1 } };

  it.each([
    ['a Deployment', [], surge],
    ['a Deployment with hostNetwork', ['hostNetwork=true'], inPlace],
    ['a DaemonSet', ['kind=DaemonSet'], surge],
    ['a DaemonSet with hostNetwork', ['kind=DaemonSet', 'hostNetwork=true'], inPlace],
  ])('%s: surges only where host ports do not pin a pod to its node', async (_, set, expected) => {
    expect(await strategyOf(set)).toEqual(expected);
  });

  it('keeps a strategy the user sets', async () => {
    expect(await strategyOf(['hostNetwork=true', 'updateStrategy.type=Recreate'])).toEqual({ type: 'Recreate' });
  });
});

describe('Chart.yaml', () => {
  it('says which Kubernetes it needs, and no home, source or maintainer address the project does not have', () => {
    const chart = parse(readFileSync('charts/envoy-shutdown-manager/Chart.yaml', 'utf8')) as Record<string, unknown>;
    expect(Object.keys(chart).filter((key) => ['home', 'sources', 'maintainers', 'icon'].includes(key))).toEqual([]);
    expect(chart.kubeVersion).toBe('>=1.23.0-0');
  });
});
