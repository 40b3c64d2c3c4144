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
import { PortMap } from '../chart/chart-pod.js';
import { envOf } from '../chart/manifests.js';
import type { JsonObject } from '../peer-fixtures/proto-json.js';
import { type PodmanObjects, podman } from '../podman/podman.js';
import { type PodContainer, type PodmanPod, runPodmanPod } from '../podman/podman-pod.js';
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
  const volumes = await emptyDirs(objects, spec, options.bootstrap);
  let reached: { pid: string; bridge: PodBridge } | undefined;
  const pod = await runPodmanPod(objects, {
    // Contour's init container, which writes the bootstrap, is not run: emptyDirs() wrote it.
    spec: { ...spec, terminationGracePeriodSeconds: grace, initContainers: [] },
    role: 'peer',
    network: 'none',
    run: (c) => {
      const envoy = c.command?.[0] === 'envoy';
      const mounts = (c.volumeMounts ?? []).flatMap((m) => {
        const source = volumes.get(m.name);
        return source === undefined ? [] : ['--volume', `${source}:${m.mountPath}${m.readOnly === true ? ':ro' : ''}`];
      });
      return {
        image: envoy ? options.images.envoy : options.images.manager,
        env: containerEnv(c),
        flags: [...mounts, ...(envoy ? options.envoyMounts.flatMap((dir) => ['--volume', `${dir}:${dir}:ro`]) : [])],
        ...(envoy ? { args: (args: string[]) => withBootstrap(args, options.bootstrap) } : {}),
      };
    },
    reach: async (container) => {
      const pod = await reach(objects, container, options);
      reached = pod;
      return PortMap.of(new Map(options.ports.map((port) => [port, pod.bridge.port(port)])));
    },
    probeWithinMs: READY_WITHIN_MS,
    describe: () => reached?.bridge.describe() ?? '',
  });
  if (reached === undefined) throw new Error('the rendered pod has no container');
  return { pod, bridge: reached.bridge, pid: reached.pid, container: pod.container };
}

/** The bridge into the pod, through the network namespace of `container` (any of the pod's); removed with the pod. */
async function reach(objects: PodmanObjects, container: string, options: PeerPodOptions): Promise<{ pid: string; bridge: PodBridge }> {
  const pid = (await podman(['inspect', '--format', '{{.State.Pid}}', container])).trim();
  const bridge = await bridgePod(pid, { ports: options.ports, backends: options.backends });
  objects.onRemove(() => bridge.close());
  return { pid, bridge };
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

/** The container's environment as kubelet resolves it, the downward API's fields filled in. */
function containerEnv(c: IContainer): Record<string, string> {
  const env = envOf(c);
  for (const [name, value] of Object.entries(env)) if (value.startsWith('fieldRef:')) env[name] = FIELD_VALUES[value.slice('fieldRef:'.length)] ?? '';
  // kubelet sets it in every pod of a cluster (the hook copies its lines to the container log only then).
  env.KUBERNETES_SERVICE_HOST = '10.96.0.1';
  return env;
}
