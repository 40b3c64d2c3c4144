// The pod this project ships, wired as the chart wires it, in either mode:
// - classic: the Envoy container (here the Envoy stand-in process) has preStop
//   `httpGet /shutdown/ready` on the sidecar; the shutdown-manager sidecar (the built binary) has
//   preStop exec `envoy-shutdown-manager shutdown`.
// - native: the manager is a native sidecar (init container, restartPolicy Always) serving
//   /shutdown/drain; Envoy's preStop `httpGet /shutdown/drain` carries the hook token and runs the
//   drain; the manager has no hook and is stopped after Envoy has exited.
// - sidecarless: an init container runs `envoy-shutdown-manager install` into the shared volume;
//   Envoy's own preStop is exec of that installed copy (`shutdown --no-ready-file`), so its
//   SIGTERM follows the drain's end, and nothing but Envoy keeps running.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { BIN } from './cli.js';
import { ENVOY_STAND_IN_BUNDLE } from './envoy/process.js';
import type { EnvoyStandInOptions } from './envoy/stand-in.js';
import type { PreStopHook } from './kubelet/hooks.js';
import { Pod, type ContainerSpec, type PodSpec } from './kubelet/pod.js';
import { preparePodEnvoy, type PodEnvoy, type PodEnvoyOptions } from './real-envoy/pod-envoy.js';

export interface EnvoyPodOptions {
  /** The Envoy stand-in, for faults real Envoy cannot be made to show. Ignored with `realEnvoy`. */
  readonly envoy?: EnvoyStandInOptions;
  /** The real Envoy, configured by the chart, proxying `ingress` to an upstream (classic mode only). */
  readonly realEnvoy?: PodEnvoyOptions;
  /** The negative control: Envoy alone, no hook, so kubelet's SIGTERM reaches it at once (real Envoy only). */
  readonly withoutManager?: boolean;
  readonly terminationGracePeriodSeconds: number;
  readonly mode?: 'classic' | 'native' | 'sidecarless';
  /** Flags for the sidecar's exec hook (classic), after --admin-address and --ready-file. */
  readonly shutdownArgs?: readonly string[];
  /** Replaces the sidecar's exec hook command altogether (e.g. one that fails). */
  readonly sidecarHook?: readonly string[];
  /** Flags for the manager, after --port 0 and --ready-file. */
  readonly managerArgs?: readonly string[];
  /** The sidecar container's environment (ENVOY_SHUTDOWN_* as the chart sets them). */
  readonly sidecarEnv?: Readonly<Record<string, string>>;
  /** Set on the manager and sent by Envoy's httpGet hook as X-Envoy-Shutdown-Token. Required in native mode. */
  readonly hookToken?: string;
}

export interface EnvoyPod {
  readonly pod: Pod;
  readonly adminAddress: string;
  readonly listeners: Readonly<Record<string, number>>;
  /** Undefined in sidecar-less mode. */
  readonly managerPort: number | undefined;
  readonly readyFile: string;
  destroy(): Promise<void>;
}

/** The executable `install` copies from: the single executable `npm run package` builds. */
export const SINGLE_EXECUTABLE = resolve('dist/envoy-shutdown-manager');
/** Where the sidecar-less pod's init container installs, and the Envoy container mounts, the copy. */
const INSTALL_DIR = 'esm';

/** An Envoy serving an `ingress` listener (20 ms per response) and a scraped `stats` listener: the demo's and the benchmarks' pod. */
export const INGRESS_AND_STATS_ENVOY: EnvoyStandInOptions = {
  drainStrategy: 'immediate',
  listeners: [
    { name: 'ingress', kind: 'http', drainType: 'MODIFY_ONLY', responseDelayMs: 20 },
    { name: 'stats', kind: 'http', drainType: 'MODIFY_ONLY' },
  ],
};

export const ENVOY = 'envoy';
export const SIDECAR = 'shutdown-manager';

const envoyReady = (line: Record<string, unknown>): boolean => line['event'] === 'ready';
const managerReady = (line: Record<string, unknown>): boolean => line['msg'] === 'shutdown manager listening';

export async function startEnvoyPod(options: EnvoyPodOptions): Promise<EnvoyPod> {
  const sharedVolume = mkdtempSync(join(tmpdir(), 'emptydir-')); // the emptyDir both containers mount
  const readyFile = join(sharedVolume, 'shutdown-ready');
  const native = options.mode === 'native';
  if (options.mode === 'sidecarless') return startSidecarlessPod(options, sharedVolume);
  if (options.realEnvoy !== undefined) {
    if (native) throw new Error('a real Envoy pod is wired in classic mode only');
    return startRealEnvoyPod(options, options.realEnvoy, sharedVolume, readyFile);
  }
  // A native sidecar starts before Envoy, so it cannot learn an ephemeral admin port: share a socket.
  const envoyOptions = native ? { ...options.envoy, admin: { unixSocket: join(sharedVolume, 'admin.sock') } } : options.envoy;
  const tokenHeader = options.hookToken === undefined ? [] : [{ name: 'X-Envoy-Shutdown-Token', value: options.hookToken }];
  const managerPort = (p: Pod): number => p.container(SIDECAR).lines.find(managerReady)?.['port'] as number;

  const envoy: ContainerSpec = {
    name: ENVOY,
    command: [process.execPath, ENVOY_STAND_IN_BUNDLE, JSON.stringify(envoyOptions)],
    ready: (c) => c.waitForLine(envoyReady),
    preStop: (p): PreStopHook => ({ httpGet: { port: managerPort(p), path: native ? '/shutdown/drain' : '/shutdown/ready', httpHeaders: tokenHeader } }),
  };
  const sidecar: ContainerSpec = {
    name: SIDECAR,
    command: [BIN, 'shutdown-manager', '--port', '0', '--ready-file', readyFile, ...(native ? ['--drain-endpoint'] : []), ...(options.managerArgs ?? [])],
    env: {
      ...(options.hookToken === undefined ? {} : { ENVOY_SHUTDOWN_HOOK_TOKEN: options.hookToken }),
      ...(native ? { ENVOY_SHUTDOWN_ADMIN_ADDRESS: `unix:${join(sharedVolume, 'admin.sock')}` } : {}),
      ...options.sidecarEnv,
    },
    ready: (c) => c.waitForLine(managerReady),
    ...(native
      ? {}
      : {
          preStop: (p: Pod): PreStopHook => ({
            exec: {
              command: options.sidecarHook ?? [BIN, 'shutdown', '--admin-address', String(p.container(ENVOY).lines.find(envoyReady)?.['adminAddress']), '--ready-file', readyFile, ...(options.shutdownArgs ?? [])],
            },
          }),
        }),
  };
  return launch(
    {
      terminationGracePeriodSeconds: options.terminationGracePeriodSeconds,
      ...(native ? { initContainers: [sidecar], containers: [envoy] } : { containers: [envoy, sidecar] }),
    },
    sharedVolume,
    readyFile,
  );
}

/** The classic pod around the real Envoy: the same hooks, Envoy's ports fixed before it starts. */
async function startRealEnvoyPod(options: EnvoyPodOptions, real: PodEnvoyOptions, sharedVolume: string, readyFile: string): Promise<EnvoyPod> {
  const envoy = await preparePodEnvoy(real);
  const tokenHeader = options.hookToken === undefined ? [] : [{ name: 'X-Envoy-Shutdown-Token', value: options.hookToken }];
  const managerPort = (p: Pod): number => p.container(SIDECAR).lines.find(managerReady)?.['port'] as number;
  const sidecar: ContainerSpec = {
    name: SIDECAR,
    command: [BIN, 'shutdown-manager', '--port', '0', '--ready-file', readyFile, ...(options.managerArgs ?? [])],
    env: { ...(options.hookToken === undefined ? {} : { ENVOY_SHUTDOWN_HOOK_TOKEN: options.hookToken }), ...options.sidecarEnv },
    ready: (c) => c.waitForLine(managerReady),
    preStop: { exec: { command: options.sidecarHook ?? [BIN, 'shutdown', '--admin-address', envoy.adminAddress, '--ready-file', readyFile, ...(options.shutdownArgs ?? [])] } },
  };
  const spec: PodSpec = {
    terminationGracePeriodSeconds: options.terminationGracePeriodSeconds,
    containers: [
      {
        name: ENVOY,
        command: envoy.command,
        ready: () => envoy.ready(),
        ...(options.withoutManager === true ? {} : { preStop: (p: Pod): PreStopHook => ({ httpGet: { port: managerPort(p), path: '/shutdown/ready', httpHeaders: tokenHeader } }) }),
      },
      ...(options.withoutManager === true ? [] : [sidecar]),
    ],
  };
  return launch(spec, sharedVolume, readyFile, envoy);
}

/** Starts the pod (removing the shared volume if that fails) and reads what tests need from it. */
async function launch(spec: PodSpec, sharedVolume: string, readyFile: string, real?: PodEnvoy): Promise<EnvoyPod> {
  let pod: Pod;
  try {
    pod = await Pod.start(spec);
  } catch (error) {
    rmSync(sharedVolume, { recursive: true, force: true });
    real?.cleanup();
    throw error;
  }
  const ready = pod.container(ENVOY).lines.find(envoyReady) ?? {};
  const hasSidecar = [...(spec.initContainers ?? []), ...spec.containers].some((c) => c.name === SIDECAR);
  return {
    pod,
    adminAddress: real?.adminAddress ?? String(ready['adminAddress']),
    listeners: real?.listeners ?? (ready['listeners'] as Record<string, number>),
    managerPort: hasSidecar ? (pod.container(SIDECAR).lines.find(managerReady)?.['port'] as number) : undefined,
    readyFile,
    async destroy() {
      await pod.destroy();
      rmSync(sharedVolume, { recursive: true, force: true });
      real?.cleanup();
    },
  };
}

async function startSidecarlessPod(options: EnvoyPodOptions, sharedVolume: string): Promise<EnvoyPod> {
  const installDir = join(sharedVolume, INSTALL_DIR);
  mkdirSync(installDir); // the emptyDir mount point
  return launch(
    {
      terminationGracePeriodSeconds: options.terminationGracePeriodSeconds,
      initContainers: [{ name: 'install', command: [SINGLE_EXECUTABLE, 'install', installDir], runToCompletion: true }],
      containers: [
        {
          name: ENVOY,
          command: [process.execPath, ENVOY_STAND_IN_BUNDLE, JSON.stringify(options.envoy)],
          ...(options.sidecarEnv === undefined ? {} : { env: options.sidecarEnv }),
          ready: (c) => c.waitForLine(envoyReady),
          // The command `install` printed, as the chart copies it into Envoy's preStop.
          preStop: (p: Pod): PreStopHook => ({
            exec: {
              command: [
                ...installedCommand(p),
                'shutdown',
                '--no-ready-file',
                '--admin-address',
                String(p.container(ENVOY).lines.find(envoyReady)?.['adminAddress']),
                ...(options.shutdownArgs ?? []),
              ],
            },
          }),
        },
      ],
    },
    sharedVolume,
    '',
  );
}

/** The exec command the install init container printed last (a JSON array), without `shutdown`. */
function installedCommand(pod: Pod): string[] {
  const printed: unknown = pod.container('install').lines.at(-1);
  if (!Array.isArray(printed) || printed.at(-1) !== 'shutdown') throw new Error(`install printed no command: ${JSON.stringify(printed)}`);
  return (printed as string[]).slice(0, -1);
}
