// The chart's pod, rendered by `helm template`, run as a podman pod of real containers: the
// manager from the project's image, Envoy from the test Envoy image, the rendered commands, args,
// environment (Secrets resolved), volume mounts, securityContext and memory limits; the bootstrap
// ConfigMap as a read-only directory, each emptyDir as a podman volume shared by the containers
// that mount it. Init containers run to completion first, in order, as kubelet runs them; a native
// sidecar among them is started and probed instead. Runs any rendered pod: the workload's, or
// the `helm test` pod.
//
// The parts every podman pod shares (a container's `podman run`, its hook, its probe) are here too,
// for the peers' rendered pods (../../support/peer-pod/peer-podman-pod.ts).
//
// What has to differ from a cluster, and only that: the pod shares the host's network (podman's
// bridge is off limits here), so every fixed port becomes a free loopback port of this machine,
// every 0.0.0.0 becomes 127.0.0.1, and the manager listens on 127.0.0.1. Envoy runs with the
// rendered args only: the chart's --disable-hot-restart is what lets pods share one network
// namespace (the hot-restart socket is an abstract socket of the namespace), as with hostNetwork.
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { IContainer, IPodSpec, ISecurityContext } from 'kubernetes-models/v1';
import { type Bootstrap, IDENTITY, type Remap } from '../chart/bootstrap.js';
import { PortMap, remapSidecarEnv } from '../chart/chart-pod.js';
import type { RenderedEnvoyPod } from '../chart/manifests.js';
import { envOf } from '../chart/manifests.js';
import { type PreStopHook, renderedHook, renderedProbe } from '../kubelet/hooks.js';
import { remapBootstrap } from '../real-envoy/pod-bootstrap.js';
import type { RunObjects as PodmanObjects } from './podman-objects.js';
import { podman } from './podman-run.js';
import { logs, waitForHttp } from './wait.js';

export interface PodContainer {
  /** The name in the pod spec. */
  readonly name: string;
  /** The podman container's name. */
  readonly id: string;
  readonly preStop: PreStopHook | undefined;
}

export interface PodmanPod {
  readonly name: string;
  readonly terminationGracePeriodSeconds: number;
  /** The pod spec's hostNetwork: kubelet finds no sandbox IP for a hook that names no host. */
  readonly hostNetwork: boolean;
  /** The regular containers, in pod order. */
  readonly containers: readonly PodContainer[];
  /** Native sidecars (init containers with restartPolicy Always), in pod order; stopped after every regular container. */
  readonly sidecars: readonly PodContainer[];
  readonly ports: PortMap;
  container(name: string): PodContainer;
}

export interface PodImages {
  /** The image each rendered image reference runs as (by id), e.g. the chart's Envoy image → the test Envoy image. */
  readonly [rendered: string]: string;
}

export interface PodmanPodOptions {
  /** Ports of the bootstrap that are outside the pod (an application the clusters point at): kept as they are. */
  readonly outsidePorts?: readonly number[];
}

/**
 * Starts the pod; `objects` removes it, its containers and volumes. `images` maps each rendered
 * image to the one to run; the manager's rendered image must be the tag `npm run image` builds.
 */
export async function startPodmanPod(
  rendered: RenderedEnvoyPod,
  objects: PodmanObjects,
  images: PodImages,
  options: PodmanPodOptions = {},
): Promise<PodmanPod> {
  const spec = rendered.podSpec;
  const outside = new Set(options.outsidePorts ?? []);
  const ports = await PortMap.reserve(fixedPorts(spec, rendered.bootstrap).filter((port) => !outside.has(port)));
  const bootstrapDir = mkdtempSync(join(tmpdir(), 'esm-bootstrap-'));
  objects.onRemove(() => rmSync(bootstrapDir, { recursive: true, force: true }));
  const onHost: Remap = { port: (port) => (outside.has(port) ? port : ports.port(port)), path: IDENTITY.path };
  const volumes = await podVolumes(spec, rendered, bootstrapDir, (bootstrap) => remapBootstrap(bootstrap, onHost), objects, images);

  return runPodmanPod(objects, {
    spec,
    role: 'pod',
    network: 'host',
    run: (c) => {
      const image = images[c.image ?? ''];
      if (image === undefined) throw new Error(`${c.name}: no image to run for ${c.image}`);
      const mounts = (c.volumeMounts ?? []).flatMap((m) => mountArgs(volumes.get(m.name) ?? missing(c, m.name), m.mountPath, m.readOnly === true));
      return { image, env: containerEnv(c, rendered, ports), flags: [...memoryArgs(c), ...mounts] };
    },
    reach: async () => ports,
  });
}

/** What a podman pod is made of, whatever rendered it. */
export interface PodmanPlan {
  readonly spec: IPodSpec;
  /** In the pod's name. */
  readonly role: string;
  readonly network: 'host' | 'none';
  /** How a container runs. */
  run(c: IContainer): ContainerRun;
  /** Where this machine reaches the pod's ports; asked once its first long-running container runs (its network namespace is the pod's). */
  reach(container: string): Promise<PortMap>;
  /** How long a probe may take to pass. */
  readonly probeWithinMs?: number;
  /** More to say when a probe never passes (how the pod is reached). */
  describe?(): string;
}

/**
 * Runs the pod as kubelet starts one: its init containers to completion, in order, a native
 * sidecar among them started and probed instead; then its containers, until every probe passes
 * (startup, else readiness). Each container is a `podman run` with its user and capabilities, its
 * entrypoint (the command's first word) and environment, then the image and the command's rest
 * and the args, $(VAR) expanded from the environment. Resolves with the pod as the podman kubelet
 * terminates it.
 */
export async function runPodmanPod(objects: PodmanObjects, plan: PodmanPlan): Promise<PodmanPod> {
  const { spec } = plan;
  const grace = spec.terminationGracePeriodSeconds;
  if (grace === undefined) throw new Error('the pod sets no terminationGracePeriodSeconds');
  const name = objects.pod(plan.role);
  await podman(['pod', 'create', '--name', name, '--network', plan.network, ...objects.labelArgs]);
  let reached: Promise<PortMap> | undefined;
  const ports = (): Promise<PortMap> => reached ?? Promise.reject(new Error('the pod has no running container'));
  const run = async (c: IContainer, detach: boolean): Promise<PodContainer> => {
    const id = objects.container(c.name);
    const how = plan.run(c);
    const args = [...(c.command ?? []).slice(1), ...(c.args ?? [])].map((arg) => expand(arg, how.env));
    const env = Object.entries(how.env).flatMap(([key, value]) => ['--env', `${key}=${value}`]);
    const entrypoint = c.command === undefined ? [] : ['--entrypoint', JSON.stringify(c.command.slice(0, 1))];
    const podArgs = ['--pod', name, '--name', id, ...objects.labelArgs, ...securityArgs(c.securityContext, spec)];
    await podman(['run', ...(detach ? ['--detach'] : []), ...podArgs, ...entrypoint, ...env, ...how.flags, how.image, ...(how.args?.(args) ?? args)], 60_000);
    // A pod's network is there from its sandbox on: reaching it starts with its first container, beside the others' start.
    if (detach && reached === undefined) {
      reached = plan.reach(id);
      reached.catch(() => undefined); // awaited below; a failed later container must not leave it unhandled
    }
    return { name: c.name, id, preStop: undefined };
  };
  // kubelet's startup and readiness probes: a container counts as started once it answers its probe.
  const probed = async (c: IContainer, id: string): Promise<void> => {
    const probe = renderedProbe(c, (port) => port);
    if (probe !== undefined) await waitForHttp(id, (await ports()).port(probe.port), probe.path, plan.probeWithinMs);
  };
  const sidecars: Array<[IContainer, PodContainer]> = [];
  for (const c of spec.initContainers ?? []) {
    if (c.restartPolicy === 'Always') {
      // A native sidecar: the next container starts once this one has passed its startup probe.
      const started = await run(c, true);
      await probed(c, started.id);
      sidecars.push([c, started]);
      continue;
    }
    const { id } = await run(c, false);
    const code = (await podman(['inspect', '--format', '{{.State.ExitCode}}', id])).trim();
    if (code !== '0') throw new Error(`init container ${c.name} exited ${code}`);
  }
  const containers: Array<[IContainer, PodContainer]> = [];
  for (const c of spec.containers) containers.push([c, await run(c, true)]);
  await Promise.all(containers.map(([c, started]) => probed(c, started.id))).catch(async (error: unknown) => {
    const tails = await Promise.all(containers.map(async ([, c]) => `${c.name}:\n${(await logs(c.id)).split('\n').slice(-40).join('\n')}`));
    throw new Error(`${(error as Error).message}\n${plan.describe?.() ?? ''}\n${tails.join('\n')}`, { cause: error });
  });
  const map = await ports();
  const hooked = ([c, started]: [IContainer, PodContainer]): PodContainer => ({ ...started, preStop: renderedHook(c, (port) => map.port(port)) });
  const regular = containers.map(hooked);
  const container = (wanted: string): PodContainer => {
    const found = regular.find((c) => c.name === wanted);
    if (found === undefined) throw new Error(`no container ${wanted} in the pod`);
    return found;
  };
  return {
    name,
    terminationGracePeriodSeconds: grace,
    hostNetwork: spec.hostNetwork === true,
    containers: regular,
    sidecars: sidecars.map(hooked),
    ports: map,
    container,
  };
}

/** How a container runs in podman. */
interface ContainerRun {
  readonly image: string;
  /** The environment as kubelet resolved it; also what $(VAR) in the command and args expands from. */
  readonly env: Readonly<Record<string, string>>;
  /** More podman flags: mounts, limits. */
  readonly flags: readonly string[];
  /** The command's rest and the args, after expansion, as the container gets them (e.g. a bootstrap put in). */
  readonly args?: (args: string[]) => string[];
}

/** kubelet's $(VAR) expansion in command and args. */
function expand(arg: string, env: Readonly<Record<string, string>>): string {
  return arg.replace(/\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (whole, name: string) => env[name] ?? whole);
}

function missing(c: { name: string }, what: string): never {
  throw new Error(`${c.name}: ${what} is neither a ConfigMap, an emptyDir nor an image the test can run`);
}

/** A volume as podman mounts it: a named volume or host directory, or an image (read-only). */
type PodVolume = { readonly source: string } | { readonly image: string };

function mountArgs(volume: PodVolume, mountPath: string, readOnly: boolean): string[] {
  if ('image' in volume) return ['--mount', `type=image,source=${volume.image},destination=${mountPath}`];
  return ['--volume', `${volume.source}:${mountPath}${readOnly ? ':ro' : ''}`];
}

/** Every volume as podman mounts it: the ConfigMap as a directory of its keys, each emptyDir as a named volume, an image volume as an image mount. */
async function podVolumes(
  spec: IPodSpec,
  rendered: RenderedEnvoyPod,
  bootstrapDir: string,
  onHost: (bootstrap: Bootstrap) => Bootstrap,
  objects: PodmanObjects,
  images: PodImages,
): Promise<Map<string, PodVolume>> {
  const volumes = new Map<string, PodVolume>();
  for (const volume of spec.volumes ?? []) {
    // kubernetes-models 4.5.1 predates image volumes (Kubernetes 1.31+).
    const reference = (volume as { image?: { reference?: string } }).image?.reference;
    if (volume.emptyDir !== undefined) volumes.set(volume.name, { source: await objects.volume(volume.name) });
    else if (reference !== undefined) volumes.set(volume.name, { image: images[reference] ?? missing({ name: volume.name }, reference) });
    else if (volume.configMap?.name === rendered.configMap.metadata?.name) {
      for (const key of Object.keys(rendered.configMap.data ?? {})) {
        // The bootstrap as JSON (YAML's subset), its ports remapped; the key name is kept.
        writeFileSync(join(bootstrapDir, key), JSON.stringify(onHost(rendered.bootstrap)), { mode: 0o644 });
      }
      chmodSync(bootstrapDir, 0o755);
      volumes.set(volume.name, { source: bootstrapDir });
    }
  }
  return volumes;
}

/** Every fixed port the pod uses: its containers' ports and those of the bootstrap's own addresses. */
function fixedPorts(spec: IPodSpec, bootstrap: Bootstrap): number[] {
  const ports = [...(spec.initContainers ?? []), ...spec.containers].flatMap((c) => (c.ports ?? []).map((p) => p.containerPort));
  const collect = (port: number): number => {
    ports.push(port);
    return port;
  };
  remapBootstrap(bootstrap, { port: collect, path: IDENTITY.path });
  return ports;
}

/** The container's environment as kubelet resolves it, with the drain's ports moved, plus what a cluster adds. */
function containerEnv(c: IContainer, rendered: RenderedEnvoyPod, ports: PortMap): Record<string, string> {
  const env = remapSidecarEnv(envOf(c, rendered.objects), { port: (port) => ports.port(port), path: IDENTITY.path });
  if (env.ENVOY_SHUTDOWN_PORT !== undefined) env.ENVOY_SHUTDOWN_HOST = '127.0.0.1';
  // kubelet sets it in every pod of a cluster (the hook copies its lines to the container log only then).
  env.KUBERNETES_SERVICE_HOST = '127.0.0.1';
  return env;
}

/** runAsUser/Group, readOnlyRootFilesystem, capabilities and allowPrivilegeEscalation as podman flags. */
function securityArgs(context: ISecurityContext | undefined, spec: IPodSpec): string[] {
  const user = context?.runAsUser ?? spec.securityContext?.runAsUser;
  const group = context?.runAsGroup ?? spec.securityContext?.runAsGroup;
  return [
    ...(user === undefined ? [] : ['--user', group === undefined ? String(user) : `${user}:${group}`]),
    // podman's plain --read-only adds a tmpfs on /tmp, /var/tmp and /run; readOnlyRootFilesystem does not.
    ...(context?.readOnlyRootFilesystem === true ? ['--read-only', '--read-only-tmpfs=false'] : []),
    ...(context?.capabilities?.drop ?? []).flatMap((cap) => ['--cap-drop', cap]),
    ...(context?.allowPrivilegeEscalation === false ? ['--security-opt', 'no-new-privileges'] : []),
  ];
}

function memoryArgs(c: IContainer): string[] {
  const limit = c.resources?.limits?.memory;
  const match = /^(\d+)(Mi|Gi)$/.exec(String(limit ?? ''));
  if (match === null) return [];
  return ['--memory', `${Number(match[1]) * (match[2] === 'Gi' ? 1024 : 1)}m`];
}
