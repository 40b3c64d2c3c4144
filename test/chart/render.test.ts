// What `helm template` renders, for every values case: each object valid against the Kubernetes
// schemas, and the pod wired as the termination sequence needs it — hooks (classic or native
// sidecar), the hook token, ports, the timeout chain, security, the sidecar's environment, the
// bootstrap's listeners and admin address, volumes, hostNetwork.

import type { IHorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import type { IPodDisruptionBudget } from 'kubernetes-models/policy/v1';
import type { IContainer, IEnvVar, ISecret, IService } from 'kubernetes-models/v1';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseAdminAddress } from '../../src/envoy/address.js';
import { parseDuration } from '../../src/shared/duration.js';
import { addressFlag, type Bootstrap, healthCheckPaths, httpProtocolOptions, listenerKind, listeners, statPrefix } from '../support/chart/bootstrap.js';
import { CASES, type ChartCase } from '../support/chart/cases.js';
import { type K8sObject, RELEASE, renderChart } from '../support/chart/helm.js';
import {
  findObjects,
  flagValue,
  mountHolding,
  type RenderedPod,
  readPod,
  releaseObjects,
  secretValue,
  validateAgainstKubernetes,
} from '../support/chart/manifests.js';

const FULLNAME = `${RELEASE}-envoy-shutdown-manager`;
const TOKEN_HEADER = 'X-Envoy-Shutdown-Token';

/** Every variable the sidecar carries in both modes, so that a bare `kubectl exec … shutdown` drains like the hook. */
const COMMON_VARIABLES = [
  'ENVOY_SHUTDOWN_ADMIN_ADDRESS',
  'ENVOY_SHUTDOWN_DRAIN_TIMEOUT',
  'ENVOY_SHUTDOWN_MIN_DRAIN_DURATION',
  'ENVOY_SHUTDOWN_QUIET_PERIOD',
  'ENVOY_SHUTDOWN_IGNORE_IDLE_CONNECTIONS',
  'ENVOY_SHUTDOWN_EXIT_AT_CONNECTIONS',
  'ENVOY_SHUTDOWN_CHECK_INTERVAL',
  'ENVOY_SHUTDOWN_HEALTH_CHECK_FAILURE_DELAY',
  'ENVOY_SHUTDOWN_ADMIN_TIMEOUT',
  'ENVOY_SHUTDOWN_READY_FILE',
  'ENVOY_SHUTDOWN_CONNECTIONS',
  'ENVOY_SHUTDOWN_IGNORE_LISTENERS',
  'ENVOY_SHUTDOWN_PORT',
  'ENVOY_SHUTDOWN_READY_TIMEOUT',
  'ENVOY_SHUTDOWN_HOOK_TOKEN',
  'ENVOY_SHUTDOWN_LOG_LEVEL',
  'ENVOY_SHUTDOWN_LOG_FORMAT',
];
/** Classic mode: the hook's wait for Envoy's hook, and the manager's wait for a drain to start. */
const CLASSIC_VARIABLES = [...COMMON_VARIABLES, 'ENVOY_SHUTDOWN_ENVOY_PRESTOP_WAIT', 'ENVOY_SHUTDOWN_DRAIN_START_TIMEOUT'];
/** Native mode: the server runs the drain itself, for Envoy's hook. */
const NATIVE_VARIABLES = [...COMMON_VARIABLES, 'ENVOY_SHUTDOWN_DRAIN_ENDPOINT'];

const RESTRICTED_CONTAINER = {
  allowPrivilegeEscalation: false,
  readOnlyRootFilesystem: true,
  runAsNonRoot: true,
  capabilities: { drop: ['ALL'] },
};

const seconds = (duration: string | undefined): number => parseDuration(duration ?? 'missing') / 1_000;

/** The chart's own listeners: those that are not the user's (by name). */
function ownListenerPrefixes(bootstrap: Bootstrap, userListenerNames: readonly string[]): string[] {
  return listeners(bootstrap)
    .filter((l) => !userListenerNames.includes(l.name))
    .map(statPrefix);
}

/** A probe's port as a number, resolving a named port among the container's own. */
function probePort(c: IContainer, port: number | string | undefined): number | undefined {
  return typeof port === 'string' ? c.ports?.find((p) => p.name === port)?.containerPort : port;
}

function listenerOnPort(bootstrap: Bootstrap, port: number | undefined): ReturnType<typeof listeners>[number] | undefined {
  return listeners(bootstrap).find((l) => l.address.socket_address?.port_value === port);
}

function userListenerNames(chartCase: ChartCase): string[] {
  const values = chartCase.values?.listeners as ReadonlyArray<{ name: string }> | undefined;
  return (values ?? [{ name: 'ingress' }]).map((l) => l.name);
}

describe.each(CASES)('helm template with $name', (chartCase) => {
  let objects: K8sObject[];
  let rendered: RenderedPod;
  beforeAll(async () => {
    objects = await renderChart(chartCase);
    rendered = readPod(objects);
  });

  it('renders only objects that are valid against the Kubernetes schemas', () => {
    expect(objects.length).toBeGreaterThanOrEqual(3);
    expect(() => validateAgainstKubernetes(objects)).not.toThrow();
  });

  it('labels every object with the app.kubernetes.io labels and helm.sh/chart', () => {
    for (const object of releaseObjects(objects)) {
      expect(object.metadata.labels).toMatchObject({
        'app.kubernetes.io/name': 'envoy-shutdown-manager',
        'app.kubernetes.io/instance': RELEASE,
        'app.kubernetes.io/managed-by': 'Helm',
        'app.kubernetes.io/version': '0.1.0',
        'helm.sh/chart': 'envoy-shutdown-manager-0.1.0',
      });
      expect(object.metadata.name).toBe(object.kind === 'Secret' ? `${FULLNAME}-hook-token` : FULLNAME);
    }
    const selector = rendered.deployment.spec?.selector.matchLabels ?? {};
    expect(Object.keys(selector).sort()).toEqual(['app.kubernetes.io/instance', 'app.kubernetes.io/name']);
    expect(rendered.deployment.spec?.template.metadata?.labels).toMatchObject(selector);
    for (const service of findObjects<IService>(objects, 'Service')) expect(service.spec?.selector).toEqual(selector);
    for (const pdb of findObjects<IPodDisruptionBudget>(objects, 'PodDisruptionBudget')) expect(pdb.spec?.selector?.matchLabels).toEqual(selector);
  });

  it(
    chartCase.native === true
      ? "runs the manager as a native sidecar that Envoy's own hook asks to drain"
      : "wires Envoy's httpGet hook to the sidecar's port and the sidecar's exec hook to the drain",
    () => {
      const { envoy, sidecar, sidecarEnv, podSpec } = rendered;
      expect(rendered.native).toBe(chartCase.native === true);
      const hook = envoy.lifecycle?.preStop?.httpGet;
      expect(hook?.path).toBe(chartCase.native === true ? '/shutdown/drain' : '/shutdown/ready');
      expect(hook?.scheme ?? 'HTTP').toBe('HTTP');
      // kubelet calls the pod IP, where the sidecar listens; a hostNetwork sandbox has none, so there the node's loopback, the pod's too.
      expect(hook?.host).toBe(chartCase.hostNetwork === true ? '127.0.0.1' : undefined);
      expect(hook?.httpHeaders?.map((h) => h.name)).toEqual([TOKEN_HEADER]);
      const port = Number(sidecarEnv.ENVOY_SHUTDOWN_PORT);
      expect(hook?.port).toBe(port);
      expect(sidecar.ports?.map((p) => p.containerPort)).toEqual([port]);
      expect(sidecarEnv.ENVOY_SHUTDOWN_HOST).toBeUndefined(); // every interface, not loopback
      expect(sidecar.command).toBeUndefined(); // the image's entrypoint, envoy-shutdown-manager
      expect(sidecar.args).toEqual(['shutdown-manager']);
      expect(envoy.lifecycle?.preStop?.exec).toBeUndefined();
      // The flag that makes the hook wait for the envoy-prestop record is on the hook command, never in the environment.
      expect(Object.keys(sidecarEnv)).not.toContain('ENVOY_SHUTDOWN_REQUIRE_ENVOY_PRESTOP');

      if (chartCase.native === true) {
        // Started before Envoy, stopped after it: an init container that kubelet keeps running.
        expect(podSpec.initContainers?.map((c) => c.name)).toEqual(['shutdown-manager']);
        expect(podSpec.containers.map((c) => c.name)).toEqual(['envoy']);
        expect(sidecar.restartPolicy).toBe('Always');
        expect(sidecar.lifecycle).toBeUndefined(); // a preStop of its own would hold back only its own SIGTERM
        expect(sidecarEnv.ENVOY_SHUTDOWN_DRAIN_ENDPOINT).toBe('true');
        // kubelet starts Envoy only once the manager answers, so Envoy's hook always finds it.
        expect(sidecar.startupProbe?.httpGet?.path).toBe('/healthz');
        expect(probePort(sidecar, sidecar.startupProbe?.httpGet?.port)).toBe(port);
      } else {
        expect(podSpec.initContainers).toBeUndefined();
        expect(podSpec.containers.map((c) => c.name)).toEqual(['envoy', 'shutdown-manager']);
        expect(sidecar.restartPolicy).toBeUndefined();
        expect(sidecar.lifecycle?.preStop).toEqual({ exec: { command: ['envoy-shutdown-manager', 'shutdown', '--require-envoy-prestop'] } });
        expect(sidecar.startupProbe).toBeUndefined();
      }
    },
  );

  it("gives the manager the hook token from a Secret, and Envoy's hook the same token as its header", () => {
    const { envoy, sidecar } = rendered;
    const header = envoy.lifecycle?.preStop?.httpGet?.httpHeaders?.find((h) => h.name === TOKEN_HEADER)?.value;
    const variable = sidecar.env?.find((e) => e.name === 'ENVOY_SHUTDOWN_HOOK_TOKEN') as IEnvVar | undefined;
    // Through a Secret, never as a literal in the pod spec's environment.
    expect(variable?.value).toBeUndefined();
    expect(variable?.valueFrom?.secretKeyRef).toEqual({ name: `${FULLNAME}-hook-token`, key: 'token' });
    const secrets = findObjects<ISecret>(objects, 'Secret');
    expect(secrets.map((secret) => secret.metadata?.name)).toEqual([`${FULLNAME}-hook-token`]);
    expect(secrets[0]?.type).toBe('Opaque');
    const token = secretValue(objects, `${FULLNAME}-hook-token`, 'token');
    expect(token).toBeDefined();
    expect(header).toBe(token);
    expect(rendered.sidecarEnv.ENVOY_SHUTDOWN_HOOK_TOKEN).toBe(token);
    if (chartCase.hookToken === undefined) expect(token).toMatch(/^[A-Za-z0-9]{48}$/);
    else expect(token).toBe(chartCase.hookToken);
    // Nowhere else: not in the bootstrap, not in any other variable.
    expect(JSON.stringify(rendered.configMap)).not.toContain(token);
    expect(Object.entries(rendered.sidecarEnv).filter(([name, value]) => name !== 'ENVOY_SHUTDOWN_HOOK_TOKEN' && value === token)).toEqual([]);
  });

  it(`nests the timeouts: drain ${chartCase.timeouts.drain} s < ready ${chartCase.timeouts.ready} s < grace ${chartCase.timeouts.grace} s`, () => {
    const { envoy, sidecarEnv, podSpec } = rendered;
    const drain = seconds(sidecarEnv.ENVOY_SHUTDOWN_DRAIN_TIMEOUT);
    const ready = seconds(sidecarEnv.ENVOY_SHUTDOWN_READY_TIMEOUT);
    const grace = podSpec.terminationGracePeriodSeconds;
    expect({ drain, ready, grace }).toEqual(chartCase.timeouts);
    expect(drain).toBeLessThan(ready); // the manager refuses to start otherwise, native mode included
    expect(drain).toBeLessThan(grace ?? 0);
    if (chartCase.native !== true) {
      expect(ready).toBeLessThan(grace ?? 0);
      // No drain, no hostage: released sooner than the ready timeout, but never before the hook could have started.
      const drainStart = seconds(sidecarEnv.ENVOY_SHUTDOWN_DRAIN_START_TIMEOUT);
      expect(drainStart).toBeGreaterThanOrEqual(seconds(sidecarEnv.ENVOY_SHUTDOWN_ENVOY_PRESTOP_WAIT) + 5);
      expect(drainStart).toBeLessThan(ready);
    }
    expect(seconds(sidecarEnv.ENVOY_SHUTDOWN_MIN_DRAIN_DURATION)).toBeLessThanOrEqual(drain);
    expect(seconds(sidecarEnv.ENVOY_SHUTDOWN_QUIET_PERIOD)).toBeLessThan(drain);
    expect(seconds(sidecarEnv.ENVOY_SHUTDOWN_HEALTH_CHECK_FAILURE_DELAY)).toBeLessThan(drain);
    // Envoy's own drain window is the drain timeout, with the strategy that closes every connection it can.
    const args = envoy.args ?? [];
    expect(Number(flagValue(args, '--drain-time-s'))).toBe(drain);
    expect(flagValue(args, '--drain-strategy')).toBe('immediate');
  });

  it('runs the pod and both containers restricted: non-root, read-only root, no capabilities, seccomp', () => {
    const { podSpec, envoy, sidecar } = rendered;
    expect(podSpec.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 65532, runAsGroup: 65532, seccompProfile: { type: 'RuntimeDefault' } });
    expect(podSpec.automountServiceAccountToken).toBe(false);
    expect(podSpec.hostNetwork ?? false).toBe(chartCase.hostNetwork === true);
    for (const c of [envoy, sidecar]) {
      expect(c.securityContext).toMatchObject(RESTRICTED_CONTAINER);
      expect(['RuntimeDefault', 'Localhost']).toContain(c.securityContext?.seccompProfile?.type);
      expect(c.securityContext?.runAsUser).not.toBe(0);
    }
    expect(envoy.securityContext).toMatchObject({ runAsUser: 65532, runAsGroup: 65532, seccompProfile: { type: 'RuntimeDefault' } });
    const custom = (chartCase.values?.shutdownManager as { securityContext?: object; resources?: object } | undefined) ?? {};
    expect(sidecar.securityContext).toEqual(
      custom.securityContext ?? { ...RESTRICTED_CONTAINER, runAsUser: 65532, runAsGroup: 65532, seccompProfile: { type: 'RuntimeDefault' } },
    );
    expect(sidecar.resources).toEqual(custom.resources ?? { requests: { cpu: '10m', memory: '64Mi' }, limits: { memory: '192Mi' } });
    expect(sidecar.resources?.requests).toBeDefined();
  });

  it('passes every setting to the sidecar as an environment variable, in a form the binary accepts', () => {
    const env = rendered.sidecarEnv;
    const expected = chartCase.native === true ? NATIVE_VARIABLES : CLASSIC_VARIABLES;
    expect(Object.keys(env).sort()).toEqual([...expected].sort());
    expect(env.ENVOY_SHUTDOWN_CONNECTIONS).toBe('listeners');
    expect(env.ENVOY_SHUTDOWN_EXIT_AT_CONNECTIONS).toBe('0');
    expect(env.ENVOY_SHUTDOWN_LOG_FORMAT).toBe('json');
    for (const name of expected.filter((n) => /TIMEOUT|DURATION|INTERVAL|DELAY|PERIOD|WAIT/.test(n))) {
      expect(() => parseDuration(env[name] ?? ''), name).not.toThrow();
    }
    expect(() => parseAdminAddress(env.ENVOY_SHUTDOWN_ADMIN_ADDRESS ?? '')).not.toThrow();
    expect(env.ENVOY_SHUTDOWN_READY_FILE).toMatch(/^\//);
  });

  it("ignores exactly the chart's own listeners, by the stat prefixes the bootstrap gives them", () => {
    const ignored = (rendered.sidecarEnv.ENVOY_SHUTDOWN_IGNORE_LISTENERS ?? '').split(',');
    const own = ownListenerPrefixes(rendered.bootstrap, userListenerNames(chartCase));
    expect(own.sort()).toEqual(['ready', 'stats']);
    const extra = (chartCase.values?.shutdown as { ignoreListeners?: string[] } | undefined)?.ignoreListeners ?? [];
    expect(ignored.sort()).toEqual([...own, ...extra].sort());
    // Every listener the drain does count is one of the user's.
    const counted = listeners(rendered.bootstrap)
      .map(statPrefix)
      .filter((p) => !ignored.includes(p));
    expect(counted.length).toBeGreaterThan(0);
    for (const prefix of counted) expect(own).not.toContain(prefix);
  });

  it('gives the sidecar the admin address the bootstrap binds, on loopback or a Unix socket, and routes the stats listener there', () => {
    const { bootstrap, sidecarEnv } = rendered;
    const address = bootstrap.admin?.address;
    // The exact same literal on both sides: no name to resolve, no IPv4/IPv6 disagreement (resolving localhost can yield ::1 while Envoy binds 127.0.0.1).
    expect(addressFlag(address)).toBe(sidecarEnv.ENVOY_SHUTDOWN_ADMIN_ADDRESS);
    if (address?.socket_address !== undefined) expect(['127.0.0.1', '::1']).toContain(address.socket_address.address);
    // Under hostNetwork the pod's loopback is the node's: the admin API is on the socket, whatever admin.* says.
    if (chartCase.hostNetwork === true) expect(address?.pipe?.path).toBe('/var/run/envoy-admin/admin.sock');
    const adminCluster = bootstrap.static_resources?.clusters?.find((c) => c.name === 'envoy-admin');
    expect(adminCluster?.load_assignment?.endpoints?.[0]?.lb_endpoints?.[0]?.endpoint?.address).toEqual(address);
  });

  it('makes every listener drain only on /drain_listeners, with a stat prefix, and gives the chart listeners explicit ones', () => {
    const all = listeners(rendered.bootstrap);
    expect(all.length).toBeGreaterThanOrEqual(3);
    for (const listener of all) {
      expect(listener.drain_type, listener.name).toBe('MODIFY_ONLY');
      expect(listener.stat_prefix, listener.name).toMatch(/^[A-Za-z0-9_.-]+$/);
      expect(() => listenerKind(listener)).not.toThrow();
    }
    expect(all.filter((l) => ['stats', 'ready'].includes(l.name)).map((l) => l.stat_prefix)).toEqual(['stats', 'ready']);
  });

  it("probes Envoy's readiness through the health check filter and its liveness on a path the drain does not fail", () => {
    const { envoy, bootstrap } = rendered;
    const readiness = envoy.readinessProbe?.httpGet;
    const readyListener = listenerOnPort(bootstrap, probePort(envoy, readiness?.port));
    expect(readyListener?.stat_prefix).toBe('ready');
    // The probes' path, and `/`: what load balancers check unless told otherwise.
    expect(readyListener && healthCheckPaths(readyListener)).toEqual([readiness?.path, '/']);
    // HAProxy's `option httpchk` and older balancers send HTTP/1.0 without a Host header.
    expect(readyListener && httpProtocolOptions(readyListener)).toEqual({ accept_http_10: true, default_host_for_http_10: 'ready' });
    expect(envoy.startupProbe?.httpGet).toEqual(readiness);
    const liveness = envoy.livenessProbe?.httpGet;
    expect(listenerOnPort(bootstrap, probePort(envoy, liveness?.port))?.stat_prefix).toBe('ready');
    expect(liveness?.path).not.toBe(readiness?.path);
    expect(liveness?.path).not.toBe('/');
    // The stats listener serves Prometheus and is what the pod annotations point at.
    const annotations = rendered.deployment.spec?.template.metadata?.annotations ?? {};
    expect(listenerOnPort(bootstrap, Number(annotations['prometheus.io/port']))?.stat_prefix).toBe('stats');
    expect(annotations['prometheus.io/path']).toBe('/stats/prometheus');
  });

  it('has no liveness probe on the sidecar, and a readiness probe on its /healthz', () => {
    const { sidecar, sidecarEnv } = rendered;
    expect(sidecar.livenessProbe).toBeUndefined();
    expect(sidecar.readinessProbe?.httpGet?.path).toBe('/healthz');
    expect(probePort(sidecar, sidecar.readinessProbe?.httpGet?.port)).toBe(Number(sidecarEnv.ENVOY_SHUTDOWN_PORT));
  });

  it('puts the ready file and the admin socket on emptyDir volumes, the socket shared by both containers', () => {
    const { podSpec, envoy, sidecar, sidecarEnv } = rendered;
    const emptyDir = (c: IContainer, path: string): string | undefined => {
      const mount = mountHolding(c, path);
      return podSpec.volumes?.find((v) => v.name === mount?.name && v.emptyDir !== undefined)?.name;
    };
    expect(emptyDir(sidecar, sidecarEnv.ENVOY_SHUTDOWN_READY_FILE ?? '')).toBeDefined();
    const admin = sidecarEnv.ENVOY_SHUTDOWN_ADMIN_ADDRESS ?? '';
    if (admin.startsWith('unix:')) {
      const socket = admin.slice('unix:'.length);
      expect(rendered.bootstrap.admin?.address?.pipe?.path).toBe(socket);
      const volume = emptyDir(sidecar, socket);
      expect(volume).toBeDefined();
      expect(emptyDir(envoy, socket)).toBe(volume);
    } else {
      expect(podSpec.volumes?.map((v) => v.name)).not.toContain('envoy-admin');
    }
    // Nothing else is writable: no hostPath, and every mount of the bootstrap is read-only.
    expect(podSpec.volumes?.every((v) => v.emptyDir !== undefined || v.configMap !== undefined)).toBe(true);
    expect(envoy.volumeMounts?.find((m) => m.name === 'bootstrap')?.readOnly).toBe(true);
  });

  it(
    chartCase.hostNetwork === true
      ? "resolves cluster names first on the node's network, with every bound port declared once"
      : 'stays in its own network namespace',
    () => {
      const { podSpec, envoy, sidecar, bootstrap } = rendered;
      if (chartCase.hostNetwork !== true) {
        expect(podSpec.dnsPolicy).toBeUndefined();
        return;
      }
      expect(podSpec.dnsPolicy).toBe('ClusterFirstWithHostNet');
      // Every port a process binds on the node is declared (so the scheduler sees it), and declared once.
      const declared = [...(envoy.ports ?? []), ...(sidecar.ports ?? [])].map((p) => p.containerPort);
      const bound = [...listeners(bootstrap).map((l) => l.address.socket_address?.port_value), Number(rendered.sidecarEnv.ENVOY_SHUTDOWN_PORT)];
      expect([...declared].sort()).toEqual([...bound].sort());
      expect(new Set(declared).size).toBe(declared.length);
    },
  );

  it('starts Envoy without a hot-restart socket, which hostNetwork pods on one node would share', () => {
    expect(rendered.envoy.args).toContain('--disable-hot-restart');
    expect(rendered.envoy.args).not.toContain('--base-id');
  });

  it('rolls the pods when the bootstrap changes', () => {
    const annotation = rendered.deployment.spec?.template.metadata?.annotations?.['checksum/bootstrap'];
    expect(annotation).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe('helm template, case by case', () => {
  const pod = async (options: Parameters<typeof renderChart>[0]): Promise<{ objects: K8sObject[]; rendered: RenderedPod }> => {
    const objects = await renderChart(options);
    return { objects, rendered: readPod(objects) };
  };

  it('sets replicas without autoscaling, and leaves them to the HorizontalPodAutoscaler with it', async () => {
    const plain = await pod({});
    expect(plain.rendered.deployment.spec?.replicas).toBe(2);
    expect(findObjects(plain.objects, 'HorizontalPodAutoscaler')).toHaveLength(0);
    expect(findObjects(plain.objects, 'PodDisruptionBudget')).toHaveLength(0);

    const scaled = await pod({ set: ['autoscaling.enabled=true', 'podDisruptionBudget.enabled=true'] });
    expect(scaled.rendered.deployment.spec?.replicas).toBeUndefined();
    const [hpa] = findObjects<IHorizontalPodAutoscaler>(scaled.objects, 'HorizontalPodAutoscaler');
    expect(hpa?.spec?.scaleTargetRef).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name: scaled.rendered.deployment.metadata?.name });
    expect(hpa?.spec?.metrics).toEqual([{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } } }]);
    const [pdb] = findObjects<IPodDisruptionBudget>(scaled.objects, 'PodDisruptionBudget');
    expect(pdb?.spec?.minAvailable).toBe(1);
  });

  it('keeps a drain_type the user set explicitly', async () => {
    const listener = {
      name: 'legacy',
      drain_type: 'DEFAULT',
      address: { socket_address: { address: '0.0.0.0', port_value: 8080 } },
      filter_chains: [{ filters: [{ name: 'envoy.filters.network.tcp_proxy', typed_config: { stat_prefix: 'legacy', cluster: 'x' } }] }],
    };
    const { rendered } = await pod({ values: { listeners: [listener] } });
    expect(listeners(rendered.bootstrap).find((l) => l.name === 'legacy')?.drain_type).toBe('DEFAULT');
  });

  it('names the image by digest when one is given', async () => {
    const digest = `sha256:${'a'.repeat(64)}`;
    const { rendered } = await pod({ set: [`shutdownManager.image.digest=${digest}`, 'envoy.image.tag=v1.38.8'] });
    expect(rendered.sidecar.image).toBe(`envoy-shutdown-manager:0.1.0@${digest}`);
    expect(rendered.envoy.image).toBe('envoyproxy/envoy:v1.38.8');
  });

  it('adds a liveness probe to the sidecar only when asked', async () => {
    const { rendered } = await pod({ set: ['shutdownManager.livenessProbe.enabled=true'] });
    expect(rendered.sidecar.livenessProbe?.httpGet?.path).toBe('/healthz');
  });
});
