// A pod as Envoy Gateway's or Contour's controller renders it (their own renderer's output, in
// test/fixtures/peers/<peer>/pod/), run in podman with its own loopback only (`--network none`):
// the rendered containers in their order, commands and args ($(VAR) expanded from the container's
// environment as kubelet does), environment (downward API resolved), users, capabilities,
// emptyDirs and hooks; the manager container from this project's image, Envoy from the test Envoy
// image with the fixture's static bootstrap where the peer's bootstrap goes. What differs from a
// cluster, and only that: no xDS (the bootstrap is static, so the xDS certificate and SDS volumes
// are not mounted, and Contour's init container, which writes the bootstrap, is not run), and the
// pod is reached through a bridge (netns-bridge.ts).
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { IContainer, IPodSpec } from 'kubernetes-models/v1';
import { type PodmanObjects, podman } from '../../image/support/podman.js';
import { type Hook, type PodContainer, type PodmanPod, securityArgs } from '../../image/support/podman-pod.js';
import { logs, waitForHttp } from '../../image/support/wait.js';
import { PortMap } from '../chart/chart-pod.js';
import { httpGetAction } from '../kubelet/hooks.js';
import type { JsonObject } from '../peer-fixtures/proto-json.js';
import type { End } from './forward.js';
import { bridgePod, type PodBridge } from './netns-bridge.js';

export interface PeerPodOptions {
  readonly spec: IPodSpec;
  /** The fixture's bootstrap, static. */
  readonly bootstrap: JsonObject;
  readonly images: { readonly manager: string; readonly envoy: string };
  /** Where the pod's Envoy reaches its backend: each listed pod loopback port goes to that end here. */
  readonly backends: ReadonlyArray<{ readonly inPod: number; readonly to: End }>;
  /** The pod's ports to reach from here: listeners, the manager's port, probes and hooks. */
  readonly ports: readonly number[];
  /** Host directories Envoy's container sees at the same path, read-only (the test's certificate). */
  readonly envoyMounts: readonly string[];
}

export interface PeerPod {
  readonly pod: PodmanPod;
  readonly bridge: PodBridge;
  /** A process in the pod (its network namespace is the pod's). */
  readonly pid: string;
  container(name: string): PodContainer;
}

/**
 * kubelet's probes keep looking for as long as the pod's probes allow (minutes); here a pod gets
 * 90 s: Envoy's /ready took over 15 s beside other pods on a busy 2-core machine.
 */
const READY_WITHIN_MS = 90_000;

/** The downward API fields the peers' pods read, as a cluster would fill them. */
const FIELD_VALUES: Readonly<Record<string, string>> = { 'metadata.name': 'peer-pod-0', 'metadata.namespace': 'peer-system', 'spec.nodeName': 'node-0' };

export async function startPeerPod(objects: PodmanObjects, options: PeerPodOptions): Promise<PeerPod> {
  const { spec } = options;
  const grace = spec.terminationGracePeriodSeconds ?? 30;
  if (spec.hostNetwork === true) throw new Error("a peer pod runs in its own network namespace here; the rendered pod asks for the node's (hostNetwork)");
  const name = objects.pod('peer');
  await podman(['pod', 'create', '--name', name, '--network', 'none', ...objects.labelArgs]);
  const volumes = await emptyDirs(objects, spec, options.bootstrap);
  const containers: PodContainer[] = [];
  const probes: Array<{ id: string; port: number; path: string }> = [];
  let reached: Promise<{ pid: string; bridge: PodBridge }> | undefined;
  for (const c of spec.containers) {
    const id = objects.container(c.name);
    const envoy = c.command?.[0] === 'envoy';
    const env = containerEnv(c);
    const args = (c.args ?? []).map((arg) => expand(arg, env));
    await podman(
      [
        'run',
        '--detach',
        '--pod',
        name,
        '--name',
        id,
        ...objects.labelArgs,
        ...securityArgs(c.securityContext, spec),
        ...Object.entries(env).flatMap(([key, value]) => ['--env', `${key}=${value}`]),
        ...(c.volumeMounts ?? []).flatMap((m) => {
          const source = volumes.get(m.name);
          return source === undefined ? [] : ['--volume', `${source}:${m.mountPath}${m.readOnly === true ? ':ro' : ''}`];
        }),
        ...(envoy ? options.envoyMounts.flatMap((dir) => ['--volume', `${dir}:${dir}:ro`]) : []),
        ...(c.command === undefined ? [] : ['--entrypoint', JSON.stringify(c.command.slice(0, 1))]),
        envoy ? options.images.envoy : options.images.manager,
        ...(c.command ?? []).slice(1).map((arg) => expand(arg, env)),
        ...(envoy ? withBootstrap(args, options.bootstrap) : args),
      ],
      60_000,
    );
    containers.push({ name: c.name, id, preStop: undefined });
    // A pod's network is there from its sandbox on, before its containers: the bridge to it starts
    // with the first container, beside the others' start rather than after them.
    if (reached === undefined) {
      reached = reach(objects, id, options);
      reached.catch(() => undefined); // awaited below; a failed later container must not leave it unhandled
    }
    const probe = c.readinessProbe?.httpGet ?? c.startupProbe?.httpGet;
    if (probe !== undefined) probes.push({ id, port: Number(probe.port), path: probe.path ?? '/' });
  }
  if (reached === undefined) throw new Error('the rendered pod has no container');
  const { pid, bridge } = await reached;
  const hooked = containers.map((c, index) => ({ ...c, preStop: hookOf(spec.containers[index] as IContainer, bridge) }));
  // kubelet's probes: the pod counts as started once every probed container answers.
  await Promise.all(probes.map((probe) => waitForHttp(probe.id, bridge.port(probe.port), probe.path, READY_WITHIN_MS))).catch(async (error: unknown) => {
    const tails = await Promise.all(containers.map(async (c) => `${c.name}:\n${(await logs(c.id)).split('\n').slice(-40).join('\n')}`));
    throw new Error(`${(error as Error).message}\n${bridge.describe()}\n${tails.join('\n')}`, { cause: error });
  });
  const pod: PodmanPod = {
    name,
    terminationGracePeriodSeconds: grace,
    hostNetwork: false,
    containers: hooked,
    sidecars: [],
    ports: PortMap.of(new Map(options.ports.map((port) => [port, bridge.port(port)]))),
    container: (wanted) => hooked.find((c) => c.name === wanted) ?? missing(wanted),
  };
  return { pod, bridge, pid, container: pod.container };
}

/** The bridge into the pod, through the network namespace of `container` (any of the pod's); removed with the pod. */
async function reach(objects: PodmanObjects, container: string, options: PeerPodOptions): Promise<{ pid: string; bridge: PodBridge }> {
  const pid = (await podman(['inspect', '--format', '{{.State.Pid}}', container])).trim();
  const bridge = await bridgePod(pid, { ports: options.ports, backends: options.backends });
  objects.onRemove(() => bridge.close());
  return { pid, bridge };
}

function missing(name: string): never {
  throw new Error(`no container ${name} in the rendered pod`);
}

/** Each emptyDir as a host directory (writable by the pod's users); Contour's config volume holds the bootstrap its init container would have written. */
async function emptyDirs(objects: PodmanObjects, spec: IPodSpec, bootstrap: JsonObject): Promise<Map<string, string>> {
  const dirs = new Map<string, string>();
  const configVolume = spec.initContainers?.[0]?.volumeMounts?.find((m) => m.mountPath === '/config')?.name;
  for (const volume of spec.volumes ?? []) {
    if (volume.emptyDir === undefined) continue;
    const dir = mkdtempSync(join(tmpdir(), `esm-peer-${volume.name}-`));
    chmodSync(dir, 0o777);
    objects.onRemove(() => rmSync(dir, { recursive: true, force: true }));
    if (volume.name === configVolume) writeFileSync(join(dir, 'envoy.json'), JSON.stringify(bootstrap), { mode: 0o644 });
    dirs.set(volume.name, dir);
  }
  return dirs;
}

/** Envoy's args with the fixture's bootstrap inline where the peer puts its own (`--config-yaml`); a `-c` path is left to the config volume. */
function withBootstrap(args: readonly string[], bootstrap: JsonObject): string[] {
  const at = args.indexOf('--config-yaml');
  return at === -1 ? [...args] : [...args.slice(0, at + 1), JSON.stringify(bootstrap), ...args.slice(at + 2)];
}

function containerEnv(c: IContainer): Record<string, string> {
  const env: Record<string, string> = {};
  for (const variable of c.env ?? []) {
    const field = variable.valueFrom?.fieldRef?.fieldPath;
    env[variable.name] = variable.value ?? (field === undefined ? '' : (FIELD_VALUES[field] ?? ''));
  }
  // kubelet sets it in every pod of a cluster (the hook copies its lines to the container log only then).
  env.KUBERNETES_SERVICE_HOST = '10.96.0.1';
  return env;
}

/** kubelet's $(VAR) expansion in command and args. */
function expand(arg: string, env: Readonly<Record<string, string>>): string {
  return arg.replace(/\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (whole, name: string) => env[name] ?? whole);
}

function hookOf(c: IContainer, bridge: PodBridge): Hook | undefined {
  const preStop = c.lifecycle?.preStop;
  if (preStop?.exec?.command !== undefined) return { exec: preStop.exec.command };
  if (preStop?.httpGet !== undefined) return { httpGet: httpGetAction(c, preStop.httpGet, (port) => bridge.port(port)) };
  return undefined;
}
