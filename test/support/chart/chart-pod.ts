// Runs the pod the chart renders under the kubelet stand-in: Envoy's container runs real Envoy with
// the rendered bootstrap and command line, the sidecar runs the built binary in place of the
// image's entrypoint with the rendered args and environment (the hook token read from the rendered
// Secret), where the pod spec puts it (a regular container, or a native sidecar among the init
// containers), and the preStop hooks are the rendered ones, headers included. Only two things
// change, so pods can run side by side: each fixed port becomes a free ephemeral port on loopback,
// and each emptyDir becomes a fresh temporary directory (paths under its mount are rewritten to
// it, in every container that mounts it). A recording tap answers at the pod's admin address and
// forwards to Envoy's own, beside it, so tests see every admin call the sidecar made.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { IContainer, IPodSpec } from 'kubernetes-models/v1';
import { BIN } from '../cli.js';
import { httpGetAction, type PreStopHook } from '../kubelet/hooks.js';
import { type ContainerSpec, Pod } from '../kubelet/pod.js';
import { freePort } from '../ports.js';
import { remapBootstrap } from '../real-envoy/pod-bootstrap.js';
import { type Bootstrap, IDENTITY, type Remap } from './bootstrap.js';
import { mountHolding, type RenderedPod } from './manifests.js';
import { type PodEnvoy, startPodEnvoy } from './pod-envoy.js';

/** The sidecar image's ENTRYPOINT: the executable, also on PATH. The built binary stands in for it. */
export const IMAGE_ENTRYPOINT = 'envoy-shutdown-manager';

/** Fixed ports of the rendered pod, each mapped to a distinct free port of this machine. */
export class PortMap {
  private constructor(private readonly ports: ReadonlyMap<number, number>) {}

  /** A distinct free port for every fixed one (see ../ports.ts for why not port 0). */
  static async reserve(fixed: Iterable<number>): Promise<PortMap> {
    const ports = new Map<number, number>();
    for (const port of new Set(fixed)) ports.set(port, await freePort());
    return new PortMap(ports);
  }

  /** Ports already chosen elsewhere (e.g. a bridge into a pod's own network namespace). */
  static of(ports: ReadonlyMap<number, number>): PortMap {
    return new PortMap(ports);
  }

  port(fixed: number): number {
    const port = this.ports.get(fixed);
    if (port === undefined) throw new Error(`port ${fixed} was not reserved: the rendered pod uses a port the test did not expect`);
    return port;
  }
}

/** Each emptyDir volume of the pod as a temporary directory. */
export class EmptyDirs {
  private readonly dirs = new Map<string, string>();

  constructor(spec: IPodSpec) {
    for (const volume of spec.volumes ?? []) {
      if (volume.emptyDir !== undefined) this.dirs.set(volume.name, mkdtempSync(join(tmpdir(), `emptydir-${volume.name}-`)));
    }
  }

  /** `path` as `c` sees it, on the temporary directory of the emptyDir mounted there. */
  pathIn(c: IContainer, path: string): string {
    const mount = mountHolding(c, path);
    const dir = mount === undefined ? undefined : this.dirs.get(mount.name);
    if (mount === undefined || dir === undefined) throw new Error(`${c.name}: ${path} is not on an emptyDir volume (the root filesystem is read-only)`);
    if (mount.subPath !== undefined) throw new Error(`${c.name}: subPath mounts are not modelled`);
    return dir + path.slice(mount.mountPath.replace(/\/$/, '').length);
  }

  remove(): void {
    for (const dir of this.dirs.values()) rmSync(dir, { recursive: true, force: true });
  }
}

/** The drain's variables that carry a port or a path (sidecar's or, sidecar-less, Envoy's); every other one passes unchanged. */
export function remapSidecarEnv(env: Readonly<Record<string, string>>, remap: Remap): Record<string, string> {
  const out = { ...env };
  const admin = env.ENVOY_SHUTDOWN_ADMIN_ADDRESS;
  if (admin !== undefined) {
    const hostPort = /^(.*):(\d+)$/.exec(admin);
    if (admin.startsWith('unix:')) out.ENVOY_SHUTDOWN_ADMIN_ADDRESS = `unix:${remap.path(admin.slice('unix:'.length))}`;
    else if (hostPort !== null) out.ENVOY_SHUTDOWN_ADMIN_ADDRESS = `${hostPort[1]}:${remap.port(Number(hostPort[2]))}`;
    else throw new Error(`ENVOY_SHUTDOWN_ADMIN_ADDRESS ${admin} is neither unix:/path nor host:port`);
  }
  if (env.ENVOY_SHUTDOWN_PORT !== undefined) out.ENVOY_SHUTDOWN_PORT = String(remap.port(Number(env.ENVOY_SHUTDOWN_PORT)));
  if (env.ENVOY_SHUTDOWN_READY_FILE !== undefined) out.ENVOY_SHUTDOWN_READY_FILE = remap.path(env.ENVOY_SHUTDOWN_READY_FILE);
  return out;
}

/** The image's executable, wherever it appears first in a command, becomes the built binary. */
function withBinary(command: readonly string[]): string[] {
  const [first, ...rest] = command;
  if (first !== IMAGE_ENTRYPOINT) throw new Error(`expected ${IMAGE_ENTRYPOINT} to run, got ${command.join(' ')}`);
  return [BIN, ...rest];
}

/** The container's preStop hook as the kubelet stand-in runs it; undefined when it has none. */
function renderedHook(c: IContainer, remap: Remap): PreStopHook | undefined {
  const preStop = c.lifecycle?.preStop;
  if (preStop === undefined) return undefined;
  if (preStop.httpGet !== undefined) return { httpGet: httpGetAction(c, preStop.httpGet, remap.port) };
  if (preStop.exec?.command !== undefined) return { exec: { command: withBinary(preStop.exec.command) } };
  throw new Error(`${c.name}: a preStop hook the stand-in cannot run: ${JSON.stringify(preStop)}`);
}

/** The container's startup (else readiness) probe, which the kubelet stand-in waits on before starting the next container. */
function renderedProbe(c: IContainer, remap: Remap): ContainerSpec['probe'] {
  const probe = c.startupProbe ?? c.readinessProbe;
  if (probe?.httpGet === undefined) return undefined;
  return { ...httpGetAction(c, probe.httpGet, remap.port), timeoutSeconds: probe.timeoutSeconds ?? 1 };
}

/** Every fixed port the pod uses: the bootstrap's, the sidecar's, and the hooks'. */
function fixedPorts(rendered: RenderedPod): number[] {
  const ports: number[] = [];
  const collect: Remap = { port: (port) => (ports.push(port), port), path: IDENTITY.path };
  remapBootstrap(rendered.bootstrap, collect);
  remapSidecarEnv(rendered.sidecarEnv, collect);
  renderedHook(rendered.envoy, collect);
  renderedHook(rendered.sidecar, collect);
  return ports;
}

export interface ChartPod {
  readonly pod: Pod;
  /** Envoy's command line after the binary, as the pod ran it. */
  readonly envoyArgs: readonly string[];
  /** The bootstrap Envoy ran: the rendered one, remapped, its admin API moved beside the tap. */
  readonly bootstrap: Bootstrap;
  /** The pod's admin address, where the tap listens: what the sidecar was told. */
  readonly adminAddress: string;
  /** Every admin call made at the pod's admin address, as `METHOD /path?query`. */
  adminCalls(): string[];
  readonly ports: PortMap;
  /** The sidecar's environment after remapping, as the processes saw it. */
  readonly sidecarEnv: Readonly<Record<string, string>>;
  /** Where the manager listens on this machine (its remapped ENVOY_SHUTDOWN_PORT). */
  readonly managerPort: number;
  /** The envoy container's view of a path in the pod (e.g. the admin socket). */
  envoyPath(path: string): string;
  destroy(): Promise<void>;
}

export async function startChartPod(rendered: RenderedPod): Promise<ChartPod> {
  const { podSpec, envoy, sidecar } = rendered;
  const grace = podSpec.terminationGracePeriodSeconds;
  if (grace === undefined) throw new Error('the pod sets no terminationGracePeriodSeconds');
  const ports = await PortMap.reserve(fixedPorts(rendered));
  const volumes = new EmptyDirs(podSpec);
  const remapFor = (c: IContainer): Remap => ({ port: (port) => ports.port(port), path: (path) => volumes.pathIn(c, path) });
  let envoyProcess: PodEnvoy | undefined;
  const cleanup = async (): Promise<void> => {
    await envoyProcess?.close();
    volumes.remove();
  };
  const sidecarEnv = remapSidecarEnv(rendered.sidecarEnv, remapFor(sidecar));
  const envoyHook = renderedHook(envoy, remapFor(envoy));
  const sidecarHook = renderedHook(sidecar, remapFor(sidecar));
  const sidecarProbe = renderedProbe(sidecar, remapFor(sidecar));
  const sidecarCommand = withBinary([...(sidecar.command ?? [IMAGE_ENTRYPOINT]), ...(sidecar.args ?? [])]);
  const sidecarSpec: ContainerSpec = {
    name: sidecar.name,
    command: sidecarCommand,
    env: sidecarEnv,
    // What the native sidecar's startup probe (/healthz) waits for before kubelet starts Envoy.
    ready: (c) => c.waitForLine((line) => line.msg === 'shutdown manager listening'),
    ...(sidecarProbe === undefined ? {} : { probe: sidecarProbe }),
    ...(sidecarHook === undefined ? {} : { preStop: sidecarHook }),
  };

  let pod: Pod;
  let started: PodEnvoy;
  try {
    envoyProcess = started = await startPodEnvoy(rendered.bootstrap, envoy, remapFor(envoy));
    const envoyProbe = renderedProbe(envoy, remapFor(envoy));
    const envoySpec: ContainerSpec = {
      name: envoy.name,
      command: started.command,
      ready: () => started.ready(),
      ...(envoyProbe === undefined ? {} : { probe: envoyProbe }),
      ...(envoyHook === undefined ? {} : { preStop: envoyHook }),
    };
    pod = await Pod.start({
      name: `${rendered.deployment.metadata?.name ?? 'envoy'}-0`,
      hostNetwork: podSpec.hostNetwork === true,
      terminationGracePeriodSeconds: grace,
      ...(rendered.native ? { initContainers: [sidecarSpec], containers: [envoySpec] } : { containers: [envoySpec, sidecarSpec] }),
    });
  } catch (error) {
    await cleanup();
    throw error;
  }
  return {
    pod,
    envoyArgs: started.command.slice(1),
    bootstrap: started.bootstrap,
    adminAddress: started.adminAddress,
    adminCalls: () => started.adminCalls(),
    ports,
    sidecarEnv,
    managerPort: Number(sidecarEnv.ENVOY_SHUTDOWN_PORT),
    envoyPath: (path) => volumes.pathIn(envoy, path),
    async destroy() {
      await pod.destroy();
      await cleanup();
    },
  };
}
