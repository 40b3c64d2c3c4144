// The chart's pod, rendered by `helm template`, run as a podman pod of real containers: the
// manager from the project's image, Envoy from the test Envoy image, the rendered commands, args,
// environment (Secrets resolved), volume mounts, securityContext and memory limits; the bootstrap
// ConfigMap as a read-only directory, each emptyDir as a podman volume shared by the containers
// that mount it. Init containers run to completion first, in order, as kubelet runs them; a native
// sidecar among them is started and probed instead. Runs any rendered pod: the workload's, or
// the `helm test` pod.
//
// What has to differ from a cluster, and only that: the pod shares the host's network (podman's
// bridge is off limits here), so every fixed port becomes a free loopback port of this machine,
// every 0.0.0.0 becomes 127.0.0.1, and the manager listens on 127.0.0.1. Envoy runs with the
// rendered args only: the chart's --disable-hot-restart is what lets pods share one network
// namespace (the hot-restart socket is an abstract socket of the namespace), as with hostNetwork.
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { IContainer, IPodSpec, IProbe, ISecurityContext } from 'kubernetes-models/v1';
import type { Bootstrap } from '../../support/chart/bootstrap.js';
import { PortMap } from '../../support/chart/chart-pod.js';
import type { RenderedEnvoyPod } from '../../support/chart/manifests.js';
import { envOf } from '../../support/chart/manifests.js';
import { type HttpGetAction, httpGetAction, resolveContainerPort } from '../../support/kubelet/hooks.js';
import type { RunObjects as PodmanObjects } from './podman-objects.js';
import { podman } from './podman-run.js';
import { waitForHttp } from './wait.js';

export type Hook = { readonly exec: readonly string[] } | { readonly httpGet: HttpGetAction };

export interface PodContainer {
  /** The name in the pod spec. */
  readonly name: string;
  /** The podman container's name. */
  readonly id: string;
  readonly preStop: Hook | undefined;
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
  const grace = spec.terminationGracePeriodSeconds;
  if (grace === undefined) throw new Error('the pod sets no terminationGracePeriodSeconds');
  const outside = new Set(options.outsidePorts ?? []);
  const ports = await PortMap.reserve(fixedPorts(spec, rendered.bootstrap).filter((port) => !outside.has(port)));
  const bootstrapDir = mkdtempSync(join(tmpdir(), 'esm-bootstrap-'));
  objects.onRemove(() => rmSync(bootstrapDir, { recursive: true, force: true }));
  const volumes = await podVolumes(spec, rendered, bootstrapDir, (bootstrap) => onHostPorts(bootstrap, ports, outside), objects, images);

  const name = objects.pod('pod');
  await podman(['pod', 'create', '--name', name, '--network', 'host', ...objects.labelArgs]);
  const run = (c: IContainer, detach: boolean): Promise<string> => {
    const id = objects.container(c.name);
    const image = images[c.image ?? ''];
    if (image === undefined) throw new Error(`${c.name}: no image to run for ${c.image}`);
    const args = [
      'run',
      ...(detach ? ['--detach'] : []),
      '--pod',
      name,
      '--name',
      id,
      ...objects.labelArgs,
      ...securityArgs(c.securityContext, spec),
      ...memoryArgs(c),
      ...(c.command === undefined ? [] : ['--entrypoint', JSON.stringify(c.command.slice(0, 1))]),
      ...Object.entries(containerEnv(c, rendered, ports)).flatMap(([key, value]) => ['--env', `${key}=${value}`]),
      ...(c.volumeMounts ?? []).flatMap((m) => mountArgs(volumes.get(m.name) ?? missing(c, m.name), m.mountPath, m.readOnly === true)),
      image,
      ...(c.command ?? []).slice(1),
      ...(c.args ?? []),
    ];
    return podman(args, 60_000).then(() => id);
  };

  // kubelet's startup and readiness probes: a container counts as started once it answers its probe.
  const probed = async (c: IContainer, id: string): Promise<void> => {
    const probe = httpProbe(c.startupProbe) ?? httpProbe(c.readinessProbe);
    if (probe !== undefined) await waitForHttp(id, ports.port(resolveContainerPort(c, probe.port)), probe.path);
  };
  const sidecars: PodContainer[] = [];
  for (const c of spec.initContainers ?? []) {
    if (c.restartPolicy === 'Always') {
      // A native sidecar: the next container starts once this one has passed its startup probe.
      const id = await run(c, true);
      await probed(c, id);
      sidecars.push({ name: c.name, id, preStop: hookOf(c, ports) });
      continue;
    }
    const id = await run(c, false);
    const code = (await podman(['inspect', '--format', '{{.State.ExitCode}}', id])).trim();
    if (code !== '0') throw new Error(`init container ${c.name} exited ${code}`);
  }
  const containers: PodContainer[] = [];
  for (const c of spec.containers) {
    const id = await run(c, true);
    containers.push({ name: c.name, id, preStop: hookOf(c, ports) });
  }
  await Promise.all(spec.containers.map((c, index) => probed(c, containers[index]?.id ?? '')));
  return {
    name,
    terminationGracePeriodSeconds: grace,
    hostNetwork: spec.hostNetwork === true,
    containers,
    sidecars,
    ports,
    container(wanted) {
      const found = containers.find((c) => c.name === wanted);
      if (found === undefined) throw new Error(`no container ${wanted} in the pod`);
      return found;
    },
  };
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

/** Every fixed port the pod uses: its containers' ports and every port_value of the bootstrap. */
function fixedPorts(spec: IPodSpec, bootstrap: Bootstrap): number[] {
  const ports = [...(spec.initContainers ?? []), ...spec.containers].flatMap((c) => (c.ports ?? []).map((p) => p.containerPort));
  walk(bootstrap, (object) => {
    if (typeof object.port_value === 'number') ports.push(object.port_value);
  });
  return ports;
}

/** A copy of the bootstrap with each port (but those outside the pod) on this machine's free one and each wildcard address on loopback. */
export function onHostPorts(bootstrap: Bootstrap, ports: PortMap, outside: ReadonlySet<number> = new Set()): Bootstrap {
  const copy = JSON.parse(JSON.stringify(bootstrap)) as Bootstrap;
  walk(copy, (object) => {
    const port = object.port_value;
    if (typeof port === 'number' && !outside.has(port)) object.port_value = ports.port(port);
    if (object.address === '0.0.0.0') object.address = '127.0.0.1';
    if (object.address === '::') object.address = '::1';
  });
  return copy;
}

function walk(value: unknown, visit: (object: Record<string, unknown>) => void): void {
  if (Array.isArray(value)) value.forEach((item) => walk(item, visit));
  else if (typeof value === 'object' && value !== null) {
    visit(value as Record<string, unknown>);
    Object.values(value).forEach((item) => walk(item, visit));
  }
}

/** The container's environment as kubelet resolves it, with the drain's ports moved, plus what a cluster adds. */
function containerEnv(c: IContainer, rendered: RenderedEnvoyPod, ports: PortMap): Record<string, string> {
  const env = envOf(c, rendered.objects);
  const admin = /^(.*):(\d+)$/.exec(env.ENVOY_SHUTDOWN_ADMIN_ADDRESS ?? '');
  if (admin !== null) env.ENVOY_SHUTDOWN_ADMIN_ADDRESS = `${admin[1]}:${ports.port(Number(admin[2]))}`;
  if (env.ENVOY_SHUTDOWN_PORT !== undefined) {
    env.ENVOY_SHUTDOWN_PORT = String(ports.port(Number(env.ENVOY_SHUTDOWN_PORT)));
    env.ENVOY_SHUTDOWN_HOST = '127.0.0.1';
  }
  // kubelet sets it in every pod of a cluster (the hook copies its lines to the container log only then).
  env.KUBERNETES_SERVICE_HOST = '127.0.0.1';
  return env;
}

/** runAsUser/Group, readOnlyRootFilesystem, capabilities and allowPrivilegeEscalation as podman flags. */
export function securityArgs(context: ISecurityContext | undefined, spec: IPodSpec): string[] {
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

function httpProbe(probe: IProbe | undefined): { port: number | string; path: string } | undefined {
  const get = probe?.httpGet;
  return get === undefined ? undefined : { port: get.port, path: get.path ?? '/' };
}

function hookOf(c: IContainer, ports: PortMap): Hook | undefined {
  const preStop = c.lifecycle?.preStop;
  if (preStop === undefined) return undefined;
  if (preStop.exec?.command !== undefined) return { exec: preStop.exec.command };
  if (preStop.httpGet !== undefined) return { httpGet: httpGetAction(c, preStop.httpGet, (port) => ports.port(port)) };
  throw new Error(`${c.name}: a preStop hook the podman kubelet cannot run: ${JSON.stringify(preStop)}`);
}
