// The rendered chart as typed objects: each one validated offline against the Kubernetes schemas
// (kubernetes-models, picked by apiVersion and kind) and against the pod rules those schemas cannot
// express, and the pod's pieces the tests read: Envoy and the manager (a regular container, or a
// native sidecar among the init containers), the manager's environment as kubelet resolves it, the
// bootstrap behind Envoy's --config-path; in sidecar-less mode, Envoy's exec hook, its environment,
// the volume holding the executable and the init container that fills it.
import { DaemonSet, Deployment, type IDaemonSet, type IDeployment } from 'kubernetes-models/apps/v1';
import { HorizontalPodAutoscaler, type IHorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { type IPodDisruptionBudget, PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { type IRole, type IRoleBinding, Role, RoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1';
import {
  ConfigMap,
  type IConfigMap,
  type IContainer,
  type IPod,
  type IPodSpec,
  type ISecret,
  type IService,
  type IServiceAccount,
  type IVolume,
  type IVolumeMount,
  Pod,
  Secret,
  Service,
  ServiceAccount,
} from 'kubernetes-models/v1';
import { parse } from 'yaml';
import type { Bootstrap } from './bootstrap.js';
import type { K8sObject } from './helm.js';

type Validator = (object: K8sObject) => void;

/** One model class per apiVersion/kind the chart may render; any other kind fails the test. */
const VALIDATORS: Readonly<Record<string, Validator>> = {
  'apps/v1/Deployment': (o) => new Deployment(o as unknown as IDeployment).validate(),
  'apps/v1/DaemonSet': (o) => new DaemonSet(o as unknown as IDaemonSet).validate(),
  'v1/ConfigMap': (o) => new ConfigMap(o as unknown as IConfigMap).validate(),
  // The `helm test` pod.
  'v1/Pod': (o) => new Pod(o as unknown as IPod).validate(),
  'v1/Service': (o) => new Service(o as unknown as IService).validate(),
  'v1/Secret': (o) => new Secret(o as unknown as ISecret).validate(),
  'policy/v1/PodDisruptionBudget': (o) => new PodDisruptionBudget(o as unknown as IPodDisruptionBudget).validate(),
  'autoscaling/v2/HorizontalPodAutoscaler': (o) => new HorizontalPodAutoscaler(o as unknown as IHorizontalPodAutoscaler).validate(),
  // events.enabled.
  'v1/ServiceAccount': (o) => new ServiceAccount(o as unknown as IServiceAccount).validate(),
  'rbac.authorization.k8s.io/v1/Role': (o) => new Role(o as unknown as IRole).validate(),
  'rbac.authorization.k8s.io/v1/RoleBinding': (o) => new RoleBinding(o as unknown as IRoleBinding).validate(),
};

/** Throws with every schema error of every object, each named by kind and name. */
export function validateAgainstKubernetes(objects: readonly K8sObject[]): void {
  const problems: string[] = [];
  for (const object of objects) {
    const validator = VALIDATORS[`${object.apiVersion}/${object.kind}`];
    if (validator === undefined) {
      problems.push(`${object.apiVersion} ${object.kind} ${object.metadata.name}: no schema to check it against`);
      continue;
    }
    try {
      validator(object);
    } catch (error) {
      problems.push(`${object.kind} ${object.metadata.name}: ${(error as Error).message}`);
    }
    const podSpec = WORKLOADS.includes(object.kind)
      ? (object as unknown as IDeployment).spec?.template.spec
      : object.kind === 'Pod'
        ? (object as unknown as IPod).spec
        : undefined;
    if (podSpec !== undefined) problems.push(...podSpecProblems(podSpec).map((problem) => `${object.kind} ${object.metadata.name}: ${problem}`));
  }
  if (problems.length > 0) throw new Error(`invalid Kubernetes objects:\n  ${problems.join('\n  ')}`);
}

/**
 * What the API server refuses in a pod spec and kubernetes-models 4.5.1 lets through. Its schemas
 * (Kubernetes 1.27) type a container's `restartPolicy` as any string, on any container, and ignore
 * fields they do not know; which container may carry what is not a schema matter. These rules are
 * the API server's (1.29 and later): native sidecars, and host ports under hostNetwork.
 */
export function podSpecProblems(spec: IPodSpec): string[] {
  const problems: string[] = [];
  const all = [...(spec.initContainers ?? []).map((c) => ({ c, where: 'initContainers' })), ...spec.containers.map((c) => ({ c, where: 'containers' }))];
  const names = new Set<string>();
  for (const { c, where } of all) {
    const at = `${where}[${c.name}]`;
    if (names.has(c.name)) problems.push(`${at}: the name is used twice in the pod`);
    names.add(c.name);
    const portNames = (c.ports ?? []).flatMap((p) => (p.name === undefined ? [] : [p.name]));
    if (new Set(portNames).size !== portNames.length) problems.push(`${at}: port names are not unique`);
    if (where === 'containers') {
      if (c.restartPolicy !== undefined) problems.push(`${at}: restartPolicy may only be set on init containers`);
      continue;
    }
    if (c.restartPolicy !== undefined && c.restartPolicy !== 'Always') problems.push(`${at}: restartPolicy must be Always, not ${c.restartPolicy}`);
    if (c.restartPolicy !== 'Always') {
      for (const field of ['lifecycle', 'livenessProbe', 'readinessProbe', 'startupProbe'] as const) {
        if (c[field] !== undefined) problems.push(`${at}: ${field} is only allowed on an init container with restartPolicy Always`);
      }
    }
  }
  if (spec.dnsPolicy !== undefined && !['ClusterFirst', 'ClusterFirstWithHostNet', 'Default', 'None'].includes(spec.dnsPolicy)) {
    problems.push(`dnsPolicy ${spec.dnsPolicy} is not one of ClusterFirst, ClusterFirstWithHostNet, Default, None`);
  }
  if (spec.hostNetwork === true) {
    // Under hostNetwork each port is also a host port (defaulted to containerPort), unique in the pod.
    const hostPorts = new Map<string, string>();
    for (const { c } of all) {
      for (const port of c.ports ?? []) {
        if (port.hostPort !== undefined && port.hostPort !== port.containerPort)
          problems.push(`${c.name}: hostPort ${port.hostPort} must equal containerPort ${port.containerPort} under hostNetwork`);
        const key = `${port.containerPort}/${port.protocol ?? 'TCP'}`;
        const owner = hostPorts.get(key);
        if (owner !== undefined) problems.push(`${c.name}: host port ${key} is also declared by ${owner}`);
        hostPorts.set(key, c.name);
      }
    }
  }
  return problems;
}

export const ENVOY_CONTAINER = 'envoy';
export const SIDECAR_CONTAINER = 'shutdown-manager';
/** Sidecar-less mode's init container, which runs `install` (source copy). */
export const INSTALL_CONTAINER = 'install-shutdown-manager';

/** The kinds the chart runs its pods as (value `kind`). */
const WORKLOADS: readonly string[] = ['Deployment', 'DaemonSet'];

/** What every mode renders: the Deployment (or DaemonSet), its pod, Envoy and the bootstrap Envoy reads. */
export interface RenderedEnvoyPod {
  readonly objects: readonly K8sObject[];
  /** The Deployment, or the DaemonSet read through what both kinds share (metadata, selector, template). */
  readonly deployment: IDeployment;
  readonly workloadKind: 'Deployment' | 'DaemonSet';
  readonly podSpec: IPodSpec;
  readonly envoy: IContainer;
  readonly configMap: IConfigMap;
  readonly bootstrap: Bootstrap;
}

export interface RenderedPod extends RenderedEnvoyPod {
  readonly sidecar: IContainer;
  /** The manager is a native sidecar: an init container (restartPolicy Always, checked by the tests). */
  readonly native: boolean;
  /** The sidecar's environment as kubelet hands it over: literal values and secretKeyRefs resolved. */
  readonly sidecarEnv: Readonly<Record<string, string>>;
}

/** Sidecar-less mode: nothing beside Envoy, whose exec hook runs the executable from a volume. */
export interface RenderedSidecarlessPod extends RenderedEnvoyPod {
  /** Envoy's exec preStop command. */
  readonly hookCommand: readonly string[];
  /** Envoy's environment as kubelet hands it over (the drain's settings, for the hook). */
  readonly envoyEnv: Readonly<Record<string, string>>;
  /** The volume the hook's executable lives on, and where Envoy mounts it. */
  readonly executableVolume: IVolume;
  readonly executableMount: IVolumeMount;
  /** The init container that fills the volume; undefined when the volume is the image itself. */
  readonly install: IContainer | undefined;
}

/** The release's own objects: everything but hooks (the `helm test` pod), which `helm install` does not create. */
export function releaseObjects(objects: readonly K8sObject[]): K8sObject[] {
  return objects.filter((o) => o.metadata.annotations?.['helm.sh/hook'] === undefined);
}

export function findObjects<T>(objects: readonly K8sObject[], kind: string): T[] {
  return objects.filter((o) => o.kind === kind) as unknown as T[];
}

function container(spec: IPodSpec, name: string): IContainer {
  const found = spec.containers.find((c) => c.name === name);
  if (found === undefined) throw new Error(`no container named ${name}: ${spec.containers.map((c) => c.name).join(', ')}`);
  return found;
}

/** A Secret's key as kubelet reads it: `data` is base64, `stringData` plain text. */
export function secretValue(objects: readonly K8sObject[], name: string, key: string): string | undefined {
  const secret = findObjects<ISecret>(objects, 'Secret').find((s) => s.metadata?.name === name);
  const data = secret?.data?.[key];
  return data === undefined ? secret?.stringData?.[key] : Buffer.from(data, 'base64').toString('utf8');
}

/**
 * A container's environment as kubelet resolves it: literal values, and secretKeyRefs read from the
 * rendered Secrets (`objects`); a downward-API fieldRef as `fieldRef:<path>`, which only the pod
 * knows. Any other source, or a Secret the render lacks, fails here.
 */
export function envOf(c: IContainer, objects: readonly K8sObject[] = []): Record<string, string> {
  return Object.fromEntries(
    (c.env ?? []).map((variable) => {
      if (variable.value !== undefined) return [variable.name, variable.value];
      if (variable.valueFrom?.fieldRef !== undefined) return [variable.name, `fieldRef:${variable.valueFrom.fieldRef.fieldPath}`];
      const ref = variable.valueFrom?.secretKeyRef;
      const value = ref === undefined ? undefined : secretValue(objects, ref.name ?? '', ref.key);
      if (value === undefined) throw new Error(`${c.name}: ${variable.name} has neither a literal value nor a secretKeyRef to a rendered Secret`);
      return [variable.name, value];
    }),
  );
}

/** The value that follows `flag` in a command line. */
export function flagValue(args: readonly string[], flag: string): string | undefined {
  const at = args.indexOf(flag);
  return at < 0 ? undefined : args[at + 1];
}

/** The mount of `c` that holds `path` (the longest mountPath that is a parent of it). */
export function mountHolding(c: IContainer, path: string): IVolumeMount | undefined {
  return (c.volumeMounts ?? [])
    .filter((m) => path === m.mountPath || path.startsWith(`${m.mountPath.replace(/\/$/, '')}/`))
    .sort((a, b) => b.mountPath.length - a.mountPath.length)[0];
}

/** The bootstrap Envoy reads: --config-path resolved through its volume mount to a ConfigMap key. */
function bootstrapOf(objects: readonly K8sObject[], spec: IPodSpec, envoy: IContainer): { configMap: IConfigMap; bootstrap: Bootstrap } {
  const configPath = flagValue(envoy.args ?? [], '--config-path');
  if (configPath === undefined) throw new Error('Envoy has no --config-path');
  const mount = mountHolding(envoy, configPath);
  const volume = spec.volumes?.find((v) => v.name === mount?.name);
  const configMapName = volume?.configMap?.name;
  if (mount === undefined || configMapName === undefined) throw new Error(`--config-path ${configPath} is not on a ConfigMap volume`);
  const configMap = findObjects<IConfigMap>(objects, 'ConfigMap').find((c) => c.metadata?.name === configMapName);
  const key = configPath.slice(mount.mountPath.replace(/\/$/, '').length + 1);
  const text = configMap?.data?.[key];
  if (configMap === undefined || text === undefined) throw new Error(`ConfigMap ${configMapName} has no key ${key}`);
  return { configMap, bootstrap: parse(text) as Bootstrap };
}

function readEnvoyPod(objects: readonly K8sObject[]): RenderedEnvoyPod {
  const workloads = objects.filter((o) => WORKLOADS.includes(o.kind));
  if (workloads.length !== 1) throw new Error(`expected one Deployment or DaemonSet, rendered ${workloads.map((o) => o.kind).join(', ') || 'none'}`);
  const workload = workloads[0] as K8sObject;
  const deployment = workload as unknown as IDeployment;
  const podSpec = deployment.spec?.template.spec;
  if (podSpec === undefined) throw new Error(`the ${workload.kind} has no pod spec`);
  const envoy = container(podSpec, ENVOY_CONTAINER);
  const workloadKind = workload.kind === 'DaemonSet' ? 'DaemonSet' : 'Deployment';
  return { objects, deployment, workloadKind, podSpec, envoy, ...bootstrapOf(objects, podSpec, envoy) };
}

export function readPod(objects: readonly K8sObject[]): RenderedPod {
  const base = readEnvoyPod(objects);
  const initSidecar = base.podSpec.initContainers?.find((c) => c.name === SIDECAR_CONTAINER);
  const sidecar = initSidecar ?? container(base.podSpec, SIDECAR_CONTAINER);
  return { ...base, sidecar, native: initSidecar !== undefined, sidecarEnv: envOf(sidecar, objects) };
}

/**
 * The sidecar-less pod: Envoy's exec hook, and the volume its executable (the hook command's
 * first element) is on, found through Envoy's own mounts.
 */
export function readSidecarlessPod(objects: readonly K8sObject[]): RenderedSidecarlessPod {
  const base = readEnvoyPod(objects);
  const hookCommand = base.envoy.lifecycle?.preStop?.exec?.command;
  if (hookCommand?.[0] === undefined) throw new Error(`Envoy's preStop hook is not an exec: ${JSON.stringify(base.envoy.lifecycle?.preStop)}`);
  const executableMount = mountHolding(base.envoy, hookCommand[0]);
  const executableVolume = base.podSpec.volumes?.find((v) => v.name === executableMount?.name);
  if (executableMount === undefined || executableVolume === undefined) throw new Error(`${hookCommand[0]} is on no volume of the envoy container`);
  const install = base.podSpec.initContainers?.find((c) => c.name === INSTALL_CONTAINER);
  return { ...base, hookCommand, envoyEnv: envOf(base.envoy, objects), executableVolume, executableMount, install };
}
