// The rendered chart as typed objects: each one validated offline against the Kubernetes schemas
// (kubernetes-models, picked by apiVersion and kind), and the pod's pieces the tests read: the two
// containers, their environment, the bootstrap behind Envoy's --config-path.
import { Deployment, type IDeployment } from 'kubernetes-models/apps/v1';
import { HorizontalPodAutoscaler, type IHorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { PodDisruptionBudget, type IPodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { ConfigMap, Service, type IConfigMap, type IContainer, type IPodSpec, type IService, type IVolumeMount } from 'kubernetes-models/v1';
import { parse } from 'yaml';
import type { Bootstrap } from './bootstrap.js';
import type { K8sObject } from './helm.js';

type Validator = (object: K8sObject) => void;

/** One model class per apiVersion/kind the chart may render; any other kind fails the test. */
const VALIDATORS: Readonly<Record<string, Validator>> = {
  'apps/v1/Deployment': (o) => new Deployment(o as unknown as IDeployment).validate(),
  'v1/ConfigMap': (o) => new ConfigMap(o as unknown as IConfigMap).validate(),
  'v1/Service': (o) => new Service(o as unknown as IService).validate(),
  'policy/v1/PodDisruptionBudget': (o) => new PodDisruptionBudget(o as unknown as IPodDisruptionBudget).validate(),
  'autoscaling/v2/HorizontalPodAutoscaler': (o) => new HorizontalPodAutoscaler(o as unknown as IHorizontalPodAutoscaler).validate(),
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
  }
  if (problems.length > 0) throw new Error(`invalid Kubernetes objects:\n  ${problems.join('\n  ')}`);
}

export const ENVOY_CONTAINER = 'envoy';
export const SIDECAR_CONTAINER = 'shutdown-manager';

export interface RenderedPod {
  readonly objects: readonly K8sObject[];
  readonly deployment: IDeployment;
  readonly podSpec: IPodSpec;
  readonly envoy: IContainer;
  readonly sidecar: IContainer;
  /** The sidecar's environment; valueFrom is not used by the chart and fails here. */
  readonly sidecarEnv: Readonly<Record<string, string>>;
  readonly configMap: IConfigMap;
  readonly bootstrap: Bootstrap;
}

export function findObjects<T>(objects: readonly K8sObject[], kind: string): T[] {
  return objects.filter((o) => o.kind === kind) as unknown as T[];
}

function only<T>(objects: readonly K8sObject[], kind: string): T {
  const found = findObjects<T>(objects, kind);
  if (found.length !== 1) throw new Error(`expected one ${kind}, rendered ${found.length}`);
  return found[0] as T;
}

function container(spec: IPodSpec, name: string): IContainer {
  const found = spec.containers.find((c) => c.name === name);
  if (found === undefined) throw new Error(`no container named ${name}: ${spec.containers.map((c) => c.name).join(', ')}`);
  return found;
}

export function envOf(c: IContainer): Record<string, string> {
  return Object.fromEntries(
    (c.env ?? []).map((variable) => {
      if (variable.value === undefined) throw new Error(`${c.name}: ${variable.name} has no literal value`);
      return [variable.name, variable.value];
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

export function readPod(objects: readonly K8sObject[]): RenderedPod {
  const deployment = only<IDeployment>(objects, 'Deployment');
  const podSpec = deployment.spec?.template.spec;
  if (podSpec === undefined) throw new Error('the Deployment has no pod spec');
  const envoy = container(podSpec, ENVOY_CONTAINER);
  const sidecar = container(podSpec, SIDECAR_CONTAINER);
  return { objects, deployment, podSpec, envoy, sidecar, sidecarEnv: envOf(sidecar), ...bootstrapOf(objects, podSpec, envoy) };
}
