// Runs any pod the chart renders (sidecar, native sidecar or sidecar-less) under the kubelet
// stand-in, container by container in the pod's own order: Envoy's container runs real Envoy with
// the rendered bootstrap and command line; the image's containers run the built binary in place of
// the image's entrypoint (the single executable for `install`, which copies what it runs as) with
// the rendered args and environment (Secrets resolved); the preStop hooks and probes are the
// rendered ones, headers included. Only two things change, so pods can run side by side: each fixed
// port becomes a free ephemeral port on loopback, and each emptyDir a fresh temporary directory
// (paths under its mount are rewritten to it, in every container that mounts it, in arguments,
// hooks and the drain's variables). A recording tap answers at the pod's admin address and
// forwards to Envoy's own, beside it, so tests see every admin call made in the pod.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { IContainer, IPodSpec } from 'kubernetes-models/v1';
import { BIN } from '../cli.js';
import { type EnvoyPod, SINGLE_EXECUTABLE } from '../envoy-pod.js';
import { type PreStopHook, renderedHook, renderedProbe } from '../kubelet/hooks.js';
import { type ContainerSpec, Pod } from '../kubelet/pod.js';
import { freePort } from '../ports.js';
import { remapBootstrap } from '../real-envoy/pod-bootstrap.js';
import { type Bootstrap, IDENTITY, type Remap } from './bootstrap.js';
import { envOf, mountHolding, type RenderedEnvoyPod, type RenderedPod, type RenderedSidecarlessPod } from './manifests.js';
import { type PodEnvoy, startPodEnvoy } from './pod-envoy.js';

/** The sidecar image's ENTRYPOINT: the executable, also on PATH. The built binary stands in for it. */
const IMAGE_ENTRYPOINT = 'envoy-shutdown-manager';

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
class EmptyDirs {
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

/** Every absolute path in `args` (colon-separated lists too) through `remap`; other arguments unchanged. */
export function remapArgs(args: readonly string[], remap: Remap): string[] {
  return args.map((arg) =>
    arg
      .split(':')
      .map((part) => (part.startsWith('/') ? remap.path(part) : part))
      .join(':'),
  );
}

/** A command of the image (its entrypoint first) on this machine: the binary that stands in for it, then the remapped args. */
function imageCommand(c: IContainer, command: readonly string[], remap: Remap): string[] {
  const [first, ...rest] = command;
  if (first !== IMAGE_ENTRYPOINT) throw new Error(`expected ${IMAGE_ENTRYPOINT} to run in ${c.name}, got ${command.join(' ')}`);
  return [rest[0] === 'install' ? SINGLE_EXECUTABLE : BIN, ...remapArgs(rest, remap)];
}

/** The container's preStop hook as the kubelet stand-in runs it: the image's executable replaced, a path on a volume remapped. */
function hookIn(c: IContainer, remap: Remap): PreStopHook | undefined {
  return renderedHook(c, remap.port, (command) => (command[0] === IMAGE_ENTRYPOINT ? imageCommand(c, command, remap) : remapArgs(command, remap)));
}

/** What a rendered pod ran as, whatever its mode. */
interface RunningChartPod {
  readonly pod: Pod;
  readonly envoyArgs: readonly string[];
  readonly bootstrap: Bootstrap;
  readonly adminAddress: string;
  readonly listeners: Readonly<Record<string, number>>;
  adminCalls(): string[];
  readonly ports: PortMap;
  /** Each container's environment after remapping, by name, as its process saw it. */
  readonly env: ReadonlyMap<string, Readonly<Record<string, string>>>;
  /** Each container's preStop hook after remapping, by name. */
  readonly hooks: ReadonlyMap<string, PreStopHook>;
  envoyPath(path: string): string;
  destroy(): Promise<void>;
}

async function runRenderedPod(rendered: RenderedEnvoyPod): Promise<RunningChartPod> {
  const { podSpec, envoy } = rendered;
  const grace = podSpec.terminationGracePeriodSeconds;
  if (grace === undefined) throw new Error('the pod sets no terminationGracePeriodSeconds');
  const all = [...(podSpec.initContainers ?? []), ...podSpec.containers];
  // Every fixed port the pod uses: the bootstrap's, the drain's variables', the hooks' and probes'.
  const fixed: number[] = [];
  const collect: Remap = {
    port: (port) => {
      fixed.push(port);
      return port;
    },
    path: IDENTITY.path,
  };
  remapBootstrap(rendered.bootstrap, collect);
  for (const c of all) {
    remapSidecarEnv(envOf(c, rendered.objects), collect);
    hookIn(c, collect);
    renderedProbe(c, collect.port);
  }
  const ports = await PortMap.reserve(fixed);
  const volumes = new EmptyDirs(podSpec);
  const remapFor = (c: IContainer): Remap => ({ port: (port) => ports.port(port), path: (path) => volumes.pathIn(c, path) });
  const env = new Map(all.map((c) => [c.name, remapSidecarEnv(envOf(c, rendered.objects), remapFor(c))]));
  const hooks = new Map<string, PreStopHook>();
  let started: PodEnvoy | undefined;
  try {
    started = await startPodEnvoy(rendered.bootstrap, envoy, remapFor(envoy));
    const envoyProcess = started;
    const spec = (c: IContainer): ContainerSpec => {
      const hook = hookIn(c, remapFor(c));
      if (hook !== undefined) hooks.set(c.name, hook);
      const probe = renderedProbe(c, remapFor(c).port);
      const isEnvoy = c.name === envoy.name;
      const command = isEnvoy ? envoyProcess.command : imageCommand(c, [...(c.command ?? [IMAGE_ENTRYPOINT]), ...(c.args ?? [])], remapFor(c));
      return {
        name: c.name,
        command,
        env: env.get(c.name) ?? {},
        // An init container without restartPolicy Always runs to completion; a native sidecar keeps running.
        ...(podSpec.containers.includes(c) || c.restartPolicy === 'Always' ? {} : { runToCompletion: true }),
        // Envoy's admin API answers; the manager logs that it listens (what its startup probe, /healthz, waits for).
        ...(isEnvoy
          ? { ready: () => envoyProcess.ready() }
          : command[1] === 'shutdown-manager'
            ? { ready: (running) => running.waitForLine((line) => line.msg === 'shutdown manager listening') }
            : {}),
        ...(probe === undefined ? {} : { probe }),
        ...(hook === undefined ? {} : { preStop: hook }),
      };
    };
    const pod = await Pod.start({
      name: `${rendered.deployment.metadata?.name ?? 'envoy'}-0`,
      hostNetwork: podSpec.hostNetwork === true,
      terminationGracePeriodSeconds: grace,
      initContainers: (podSpec.initContainers ?? []).map(spec),
      containers: podSpec.containers.map(spec),
    });
    return {
      pod,
      envoyArgs: envoyProcess.command.slice(1),
      bootstrap: envoyProcess.bootstrap,
      adminAddress: envoyProcess.adminAddress,
      listeners: envoyProcess.listeners,
      adminCalls: () => envoyProcess.adminCalls(),
      ports,
      env,
      hooks,
      envoyPath: (path) => volumes.pathIn(envoy, path),
      async destroy() {
        await pod.destroy();
        await envoyProcess.close();
        volumes.remove();
      },
    };
  } catch (error) {
    await started?.close();
    volumes.remove();
    throw error;
  }
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

/** The pod of the sidecar modes (classic or native). */
export async function startChartPod(rendered: RenderedPod): Promise<ChartPod> {
  const run = await runRenderedPod(rendered);
  const sidecarEnv = run.env.get(rendered.sidecar.name) ?? {};
  return { ...run, sidecarEnv, managerPort: Number(sidecarEnv.ENVOY_SHUTDOWN_PORT) };
}

export interface SidecarlessChartPod extends EnvoyPod {
  /** Envoy's command line after the binary, as the pod ran it. */
  readonly envoyArgs: readonly string[];
  /** Envoy's environment after remapping: what the hook ran with. */
  readonly envoyEnv: Readonly<Record<string, string>>;
  /** Envoy's exec hook after remapping, as kubelet runs it. */
  readonly hookCommand: readonly string[];
  /** The last line the install init container printed: the exec command, as a JSON array. */
  readonly installPrinted: unknown;
  /** The envoy container's view of a path in the pod (e.g. the executable's volume). */
  envoyPath(path: string): string;
}

/** The sidecar-less pod: its install init container runs the single executable to completion, then Envoy. */
export async function startSidecarlessChartPod(rendered: RenderedSidecarlessPod): Promise<SidecarlessChartPod> {
  const { envoy, install } = rendered;
  if (install === undefined) throw new Error('no install init container: only sidecarless.source copy runs here');
  const run = await runRenderedPod(rendered);
  const hook = run.hooks.get(envoy.name);
  return {
    ...run,
    managerPort: undefined,
    readyFile: '',
    envoyEnv: run.env.get(envoy.name) ?? {},
    hookCommand: hook !== undefined && 'exec' in hook ? hook.exec.command : [],
    installPrinted: run.pod.container(install.name).lines.at(-1),
  };
}
