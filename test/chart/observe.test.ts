// events.enabled and metrics.*: off, the render is byte for byte the default (whose pods name the
// namespace's `default` ServiceAccount); on, the least the manager needs to create Events (create
// and patch on events, get on pods for the reason a pod was terminated, in the release namespace,
// with a token only its container mounts), a PodMonitor on its /metrics, the alert rules (promtool
// checks them) and the dashboard.

import type { IRole, IRoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1';
import type { IConfigMap, IContainer } from 'kubernetes-models/v1';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { helmTemplate, type K8sObject, NAMESPACE, parseManifests, RELEASE, renderChart } from '../support/chart/helm.js';
import { findObjects, readPod, validateAgainstKubernetes } from '../support/chart/manifests.js';
import { promtoolCheckRules } from '../support/prometheus-server.js';

const FULLNAME = `${RELEASE}-envoy-shutdown-manager`;
/** A fixed token: a generated one differs between renders. */
const TOKEN = 'hookToken.value=observe-test-token-0123';
/** nativeSidecar needs 1.29 or later. */
const KUBE = '1.33.0';
const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';
const MODES = [[], ['nativeSidecar=true'], ['kind=DaemonSet'], ['mode=sidecarless']];
const OFF = ['events.enabled=false', 'metrics.podMonitor.enabled=false', 'metrics.podMonitor.envoyStats=true', 'metrics.podMonitor.interval=15s'];

const mounts = (container: IContainer | undefined): string[] => (container?.volumeMounts ?? []).map((mount) => mount.mountPath);

describe('events.enabled and metrics.podMonitor', () => {
  it.each(MODES)('off, the render is byte for byte the default (%s)', async (...mode) => {
    const plain = await helmTemplate({ set: [TOKEN, ...mode], kubeVersion: KUBE });
    const off = await helmTemplate({ set: [TOKEN, ...mode, ...OFF], kubeVersion: KUBE });
    expect(plain.code).toBe(0);
    expect(off.stdout).toBe(plain.stdout);
    expect(plain.stdout).not.toMatch(/kind: ServiceAccount|kind: Role|PodMonitor|ENVOY_SHUTDOWN_EVENTS|kube-api-access/);
    // Named even here, so that an upgrade from events on replaces the chart's account (see upgrade.test.ts).
    const workload = parseManifests(plain.stdout).find((o) => o.kind === 'Deployment' || o.kind === 'DaemonSet') as
      | { spec?: { template?: { spec?: { serviceAccountName?: string } } } }
      | undefined;
    expect(workload?.spec?.template?.spec?.serviceAccountName).toBe('default');
  });

  it.each([[[]], [['nativeSidecar=true']]])(
    "on (%j): a Role for create and patch on events and get on pods only, bound to the pods' ServiceAccount; the token in the manager alone",
    async (mode) => {
      const objects = await renderChart({ set: [TOKEN, ...mode, 'events.enabled=true'], kubeVersion: KUBE });
      validateAgainstKubernetes(objects.filter((object) => object.kind !== 'PodMonitor'));
      const pod = readPod(objects);
      expect(findObjects(objects, 'ServiceAccount')).toMatchObject([{ metadata: { name: FULLNAME }, automountServiceAccountToken: false }]);
      const [role] = findObjects<IRole>(objects, 'Role');
      expect(role?.rules).toEqual([
        { apiGroups: [''], resources: ['events'], verbs: ['create', 'patch'] },
        { apiGroups: [''], resources: ['pods'], verbs: ['get'] },
      ]);
      const [binding] = findObjects<IRoleBinding>(objects, 'RoleBinding');
      expect(binding?.roleRef).toEqual({ apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: role?.metadata?.name });
      expect(binding?.subjects).toEqual([{ kind: 'ServiceAccount', name: FULLNAME, namespace: NAMESPACE }]);
      expect(pod.podSpec.serviceAccountName).toBe(FULLNAME);
      // No token for Envoy: the pod mounts none; the manager mounts one where the in-cluster convention looks.
      expect(pod.podSpec.automountServiceAccountToken).toBe(false);
      expect(mounts(pod.sidecar)).toContain(SERVICE_ACCOUNT_DIR);
      expect(mounts(pod.envoy)).not.toContain(SERVICE_ACCOUNT_DIR);
      const volume = pod.podSpec.volumes?.find((v) => v.name === pod.sidecar.volumeMounts?.find((m) => m.mountPath === SERVICE_ACCOUNT_DIR)?.name);
      expect(volume?.projected?.sources?.map((source) => Object.keys(source)[0])).toEqual(['serviceAccountToken', 'configMap', 'downwardAPI']);
      expect(pod.sidecarEnv).toMatchObject({
        ENVOY_SHUTDOWN_EVENTS: 'true',
        ENVOY_SHUTDOWN_POD_NAME: 'fieldRef:metadata.name',
        ENVOY_SHUTDOWN_POD_NAMESPACE: 'fieldRef:metadata.namespace',
        ENVOY_SHUTDOWN_POD_UID: 'fieldRef:metadata.uid',
      });
    },
  );

  it("binds the Role to the user's ServiceAccount instead of making one", async () => {
    const objects = await renderChart({ set: [TOKEN, 'events.enabled=true', 'serviceAccountName=mine'] });
    expect(findObjects(objects, 'ServiceAccount')).toEqual([]);
    expect(findObjects<IRoleBinding>(objects, 'RoleBinding')[0]?.subjects).toEqual([{ kind: 'ServiceAccount', name: 'mine', namespace: NAMESPACE }]);
    expect(readPod(objects).podSpec.serviceAccountName).toBe('mine');
  });

  it("a PodMonitor selects the release's pods and scrapes the manager's /metrics by its port's name", async () => {
    const objects = await renderChart({
      set: [
        TOKEN,
        'metrics.podMonitor.enabled=true',
        'metrics.podMonitor.envoyStats=true',
        'metrics.podMonitor.interval=30s',
        'metrics.podMonitor.labels.release=prom',
      ],
    });
    const [monitor] = objects.filter(
      (object): object is K8sObject & { spec: { selector: { matchLabels: Record<string, string> }; podMetricsEndpoints: Array<Record<string, string>> } } =>
        object.kind === 'PodMonitor',
    );
    expect(monitor?.apiVersion).toBe('monitoring.coreos.com/v1');
    expect(monitor?.metadata.labels).toMatchObject({ release: 'prom' });
    const pod = readPod(objects);
    const labels = pod.deployment.spec?.template.metadata?.labels ?? {};
    for (const [key, value] of Object.entries(monitor?.spec.selector.matchLabels ?? {})) expect(labels[key]).toBe(value);
    const portNames = (container: IContainer): string[] => (container.ports ?? []).map((port) => port.name ?? '');
    expect(monitor?.spec.podMetricsEndpoints).toEqual([
      { port: 'shutdown-mgr', path: '/metrics', interval: '30s' },
      { port: 'metrics', path: '/stats/prometheus', interval: '30s' },
    ]);
    expect(portNames(pod.sidecar)).toContain('shutdown-mgr');
    expect(portNames(pod.envoy)).toContain('metrics');
  });

  it('refuses them in mode sidecarless, which has no manager', async () => {
    const on = [
      'events.enabled',
      'metrics.podMonitor.enabled',
      'metrics.prometheusRule.enabled',
      'metrics.rulesConfigMap.enabled',
      'metrics.dashboard.enabled',
    ];
    const result = await helmTemplate({ set: ['mode=sidecarless', ...on.map((key) => `${key}=true`)] });
    expect(result.code).not.toBe(0);
    for (const key of on) expect(result.stderr).toContain(`${key}: mode sidecarless has no shutdown-manager`);
  });

  it('renders no rules and no dashboard by default', async () => {
    const objects = await renderChart({ set: [TOKEN] });
    expect(objects.filter((o) => o.kind === 'PrometheusRule' || /-(rules|dashboard)$/.test(o.metadata.name))).toEqual([]);
  });

  it('renders the alerts as a PrometheusRule and as a plain rules file alike, both accepted by promtool; the dashboard for the Grafana sidecar', async () => {
    const objects = await renderChart({
      set: [
        TOKEN,
        'metrics.prometheusRule.enabled=true',
        'metrics.prometheusRule.labels.release=prom',
        'metrics.rulesConfigMap.enabled=true',
        'metrics.dashboard.enabled=true',
        'metrics.alerts.runbookBaseUrl=https://example.org/observe',
      ],
    });
    const [rule] = objects.filter((o): o is K8sObject & { spec: { groups: unknown[] } } => o.kind === 'PrometheusRule');
    expect(rule?.apiVersion).toBe('monitoring.coreos.com/v1');
    expect(rule?.metadata.labels).toMatchObject({ release: 'prom' });
    const configMaps = findObjects<IConfigMap & K8sObject>(objects, 'ConfigMap');
    const file = configMaps.find((c) => c.metadata.name.endsWith('-rules'))?.data?.['envoy-shutdown-manager.rules.yaml'] ?? '';
    // One list of rules, two wrappings.
    expect(parse(file)).toEqual({ groups: rule?.spec.groups });
    expect(await promtoolCheckRules(file)).toMatch(/SUCCESS: 8 rules found/);
    if (rule === undefined) throw new Error('the chart rendered no PrometheusRule');
    const alerts = (rule.spec.groups as Array<{ rules: Array<{ alert?: string; annotations?: Record<string, string> }> }>)
      .flatMap((g) => g.rules)
      .filter((r) => r.alert !== undefined);
    for (const alert of alerts) expect(alert.annotations?.runbook_url).toBe(`https://example.org/observe#${alert.alert?.toLowerCase() ?? ''}`);
    const dashboard = configMaps.find((c) => c.metadata.name.endsWith('-dashboard'));
    expect(dashboard?.metadata.labels).toMatchObject({ grafana_dashboard: '1' });
    expect(JSON.parse(dashboard?.data?.['envoy-shutdown-manager.json'] ?? '')).toMatchObject({ uid: 'envoy-shutdown-manager', panels: expect.any(Array) });
    validateAgainstKubernetes(objects.filter((object) => object.kind !== 'PrometheusRule'));
  });
});

describe('metrics.finalScrapeTimeout', () => {
  const finalScrapeEnv = async (set: readonly string[]): Promise<Record<string, string | undefined>> => {
    const { sidecarEnv } = readPod(await renderChart({ set: [TOKEN, ...set], kubeVersion: KUBE }));
    return { timeout: sidecarEnv.ENVOY_SHUTDOWN_FINAL_SCRAPE_TIMEOUT, grace: sidecarEnv.ENVOY_SHUTDOWN_TERMINATION_GRACE_PERIOD };
  };

  it.each([
    [['metrics.podMonitor.enabled=true'], { timeout: '35s', grace: '90s' }],
    [['metrics.podMonitor.enabled=true', 'metrics.podMonitor.interval=1m'], { timeout: '65s', grace: '90s' }],
    [['metrics.podMonitor.enabled=true', 'metrics.podMonitor.interval=500ms', 'nativeSidecar=true'], { timeout: '5500ms', grace: '90s' }],
    [['metrics.finalScrapeTimeout=12.5', 'shutdown.terminationGracePeriodSeconds=100'], { timeout: '12500ms', grace: '100s' }],
    [['metrics.podMonitor.enabled=true', 'metrics.finalScrapeTimeout=0'], { timeout: undefined, grace: undefined }],
    [[], { timeout: undefined, grace: undefined }],
  ])('%j: the manager stays %j', async (set, expected) => {
    expect(await finalScrapeEnv(set)).toEqual(expected);
  });

  it.each([
    [['metrics.finalScrapeTimeout=90'], 'metrics.finalScrapeTimeout (90 s) must be shorter than shutdown.terminationGracePeriodSeconds (90 s)'],
    [
      ['metrics.podMonitor.enabled=true', 'metrics.podMonitor.interval=1m', 'shutdown.drainTimeout=20'],
      "metrics.finalScrapeTimeout (null: the PodMonitor's interval + 5 = 65 s) must be shorter than shutdown.terminationGracePeriodSeconds (50 s)",
    ],
    [['mode=sidecarless', 'metrics.finalScrapeTimeout=10'], 'metrics.finalScrapeTimeout: mode sidecarless has no shutdown-manager to serve /metrics'],
  ])('refuses %j: %s', async (set, problem) => {
    const result = await helmTemplate({ set: [TOKEN, ...set] });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('(1 problem)');
    expect(result.stderr).toContain(problem);
  });
});
