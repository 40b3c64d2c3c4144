// Runs the sidecar-less pod the chart renders under the kubelet stand-in. The install init
// container runs the single executable (what the image's ENTRYPOINT is) with the rendered
// arguments, to completion; Envoy's container runs real Envoy from the rendered
// bootstrap, with the rendered environment; its preStop hook is the rendered exec command, which
// kubelet runs in that container's environment. As for the sidecar pods, only two things change:
// each fixed port becomes a free one, and each emptyDir a temporary directory (in every argument
// that names a path on it, including each part of a colon-separated list).
import type { IContainer } from 'kubernetes-models/v1';
import { type EnvoyPod, SINGLE_EXECUTABLE } from '../envoy-pod.js';
import { type ContainerSpec, Pod } from '../kubelet/pod.js';
import { remapBootstrap } from '../real-envoy/pod-bootstrap.js';
import { IDENTITY, type Remap } from './bootstrap.js';
import { EmptyDirs, IMAGE_ENTRYPOINT, PortMap, remapSidecarEnv } from './chart-pod.js';
import type { RenderedSidecarlessPod } from './manifests.js';
import { type PodEnvoy, startPodEnvoy } from './pod-envoy.js';

export interface SidecarlessChartPod extends EnvoyPod {
  /** Envoy's command line after the binary, as the pod ran it. */
  readonly envoyArgs: readonly string[];
  /** Every admin call made at the pod's admin address, as `METHOD /path?query`. */
  adminCalls(): string[];
  /** Envoy's environment after remapping: what the hook ran with. */
  readonly envoyEnv: Readonly<Record<string, string>>;
  /** Envoy's exec hook after remapping, as kubelet runs it. */
  readonly hookCommand: readonly string[];
  /** The last line the install init container printed: the exec command, as a JSON array. */
  readonly installPrinted: unknown;
  /** The envoy container's view of a path in the pod (e.g. the executable's volume). */
  envoyPath(path: string): string;
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

/** The init container's command, with the single executable in place of the image's entrypoint. */
function installCommand(install: IContainer, remap: Remap): string[] {
  const [first, ...rest] = [...(install.command ?? [IMAGE_ENTRYPOINT]), ...(install.args ?? [])];
  if (first !== IMAGE_ENTRYPOINT) throw new Error(`expected ${IMAGE_ENTRYPOINT} to run in ${install.name}, got ${String(first)}`);
  return [SINGLE_EXECUTABLE, ...remapArgs(rest, remap)];
}

export async function startSidecarlessChartPod(rendered: RenderedSidecarlessPod): Promise<SidecarlessChartPod> {
  const { podSpec, envoy, install } = rendered;
  const grace = podSpec.terminationGracePeriodSeconds;
  if (grace === undefined) throw new Error('the pod sets no terminationGracePeriodSeconds');
  if (install === undefined) throw new Error('no install init container: only sidecarless.source copy runs here');

  const fixed: number[] = [];
  const collect: Remap = { port: (port) => (fixed.push(port), port), path: IDENTITY.path };
  remapBootstrap(rendered.bootstrap, collect);
  remapSidecarEnv(rendered.envoyEnv, collect);
  const ports = await PortMap.reserve(fixed);
  const volumes = new EmptyDirs(podSpec);
  const remapFor = (c: IContainer): Remap => ({ port: (port) => ports.port(port), path: (path) => volumes.pathIn(c, path) });

  const envoyEnv = remapSidecarEnv(rendered.envoyEnv, remapFor(envoy));
  const hookCommand = remapArgs(rendered.hookCommand, remapFor(envoy));
  const installSpec: ContainerSpec = { name: install.name, command: installCommand(install, remapFor(install)), runToCompletion: true };
  let pod: Pod;
  let started: PodEnvoy | undefined;
  try {
    started = await startPodEnvoy(rendered.bootstrap, envoy, remapFor(envoy));
    const ready = started.ready;
    const envoySpec: ContainerSpec = {
      name: envoy.name,
      command: started.command,
      env: envoyEnv,
      ready: () => ready(),
      preStop: { exec: { command: hookCommand } },
    };
    pod = await Pod.start({ terminationGracePeriodSeconds: grace, initContainers: [installSpec], containers: [envoySpec] });
  } catch (error) {
    await started?.close();
    volumes.remove();
    throw error;
  }
  const envoyProcess = started;
  return {
    pod,
    adminAddress: envoyProcess.adminAddress,
    listeners: envoyProcess.listeners,
    managerPort: undefined,
    readyFile: '',
    envoyArgs: envoyProcess.command.slice(1),
    adminCalls: () => envoyProcess.adminCalls(),
    envoyEnv,
    hookCommand,
    installPrinted: pod.container(install.name).lines.at(-1),
    envoyPath: (path) => volumes.pathIn(envoy, path),
    async destroy() {
      await pod.destroy();
      await envoyProcess.close();
      volumes.remove();
    },
  };
}
