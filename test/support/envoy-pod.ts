// The pod this project ships, wired as the chart wires it, around the real Envoy (the chart's own
// bootstrap and flags, `ingress` proxying to an upstream, its admin API behind a recording tap),
// in either mode:
// - classic: the Envoy container has preStop `httpGet /shutdown/ready` on the sidecar; the
//   shutdown-manager sidecar (the built binary) has preStop exec `envoy-shutdown-manager shutdown`.
// - native: the manager is a native sidecar (init container, restartPolicy Always) serving
//   /shutdown/drain; Envoy's preStop `httpGet /shutdown/drain` carries the hook token and runs the
//   drain; the manager has no hook and is stopped after Envoy has exited. It starts before Envoy,
//   so it cannot learn an ephemeral admin port: the admin API is on a Unix socket in the shared volume.
// (The sidecar-less pod is the chart's own: ./chart/chart-pod.ts.)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { type PodEnvoy, startChartPodEnvoy } from './chart/pod-envoy.js';
import { BIN } from './cli.js';
import type { PreStopHook } from './kubelet/hooks.js';
import { type ContainerSpec, Pod, type PodSpec } from './kubelet/pod.js';

export interface EnvoyPodOptions {
  /** The real Envoy, configured by the chart, proxying `ingress` to an upstream. */
  readonly realEnvoy: { readonly upstreamPort: number; readonly values?: Record<string, unknown>; readonly statsFlushInterval?: string };
  /** The negative control: Envoy alone, no hook, so kubelet's SIGTERM reaches it at once (classic mode). */
  readonly withoutManager?: boolean;
  readonly terminationGracePeriodSeconds: number;
  readonly mode?: 'classic' | 'native';
  /** Flags for the sidecar's exec hook, after --admin-address and --ready-file. */
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
  /** The tap in front of Envoy's admin API: where the hooks and the manager send admin requests. */
  readonly adminAddress: string;
  /** Listener ports by stat prefix: `ingress`, `stats`, `ready`. */
  readonly listeners: Readonly<Record<string, number>>;
  /** Undefined without a manager. */
  readonly managerPort: number | undefined;
  readonly readyFile: string;
  /** Every admin call made at the admin address, as `METHOD /path?query`. */
  adminCalls(): string[];
  destroy(): Promise<void>;
}

/** The executable `install` copies from: the single executable `npm run package` builds. */
export const SINGLE_EXECUTABLE = resolve('dist/envoy-shutdown-manager');

export const ENVOY = 'envoy';
export const SIDECAR = 'shutdown-manager';

const managerReady = (line: Record<string, unknown>): boolean => line.msg === 'shutdown manager listening';

export async function startEnvoyPod(options: EnvoyPodOptions): Promise<EnvoyPod> {
  const sharedVolume = mkdtempSync(join(tmpdir(), 'emptydir-')); // the emptyDir both containers mount
  const readyFile = join(sharedVolume, 'shutdown-ready');
  const native = options.mode === 'native';
  if (native && options.withoutManager === true) throw new Error('the negative control is wired in classic mode only');
  let envoy: PodEnvoy;
  try {
    const values = native ? { ...options.realEnvoy.values, admin: { unixSocket: { enabled: true } } } : options.realEnvoy.values;
    const flush = options.realEnvoy.statsFlushInterval === undefined ? {} : { statsFlushInterval: options.realEnvoy.statsFlushInterval };
    envoy = await startChartPodEnvoy({
      upstreamPort: options.realEnvoy.upstreamPort,
      podDir: sharedVolume,
      ...(values === undefined ? {} : { values }),
      ...flush,
    });
  } catch (error) {
    rmSync(sharedVolume, { recursive: true, force: true });
    throw error;
  }

  const tokenHeader = options.hookToken === undefined ? [] : [{ name: 'X-Envoy-Shutdown-Token', value: options.hookToken }];
  const managerPort = (p: Pod): number => p.container(SIDECAR).lines.find(managerReady)?.port as number;
  const sidecar: ContainerSpec = {
    name: SIDECAR,
    command: [BIN, 'shutdown-manager', '--port', '0', '--ready-file', readyFile, ...(native ? ['--drain-endpoint'] : []), ...(options.managerArgs ?? [])],
    env: {
      ...(options.hookToken === undefined ? {} : { ENVOY_SHUTDOWN_HOOK_TOKEN: options.hookToken }),
      ...(native ? { ENVOY_SHUTDOWN_ADMIN_ADDRESS: envoy.adminAddress } : {}),
      ...options.sidecarEnv,
    },
    ready: (c) => c.waitForLine(managerReady),
    ...(native
      ? {}
      : {
          preStop: {
            exec: {
              command: options.sidecarHook ?? [
                BIN,
                'shutdown',
                '--admin-address',
                envoy.adminAddress,
                '--ready-file',
                readyFile,
                ...(options.shutdownArgs ?? []),
              ],
            },
          },
        }),
  };
  const envoyContainer: ContainerSpec = {
    name: ENVOY,
    command: envoy.command,
    ready: () => envoy.ready(),
    ...(options.withoutManager === true
      ? {}
      : {
          preStop: (p: Pod): PreStopHook => ({
            httpGet: { port: managerPort(p), path: native ? '/shutdown/drain' : '/shutdown/ready', httpHeaders: tokenHeader },
          }),
        }),
  };
  const spec: PodSpec = {
    terminationGracePeriodSeconds: options.terminationGracePeriodSeconds,
    ...(native
      ? { initContainers: [sidecar], containers: [envoyContainer] }
      : { containers: [envoyContainer, ...(options.withoutManager === true ? [] : [sidecar])] }),
  };
  return launch(spec, sharedVolume, readyFile, envoy);
}

/** Starts the pod (removing the shared volume and the tap if that fails) and reads what tests need from it. */
async function launch(spec: PodSpec, sharedVolume: string, readyFile: string, envoy: PodEnvoy): Promise<EnvoyPod> {
  const cleanup = async (): Promise<void> => {
    await envoy.close();
    rmSync(sharedVolume, { recursive: true, force: true });
  };
  let pod: Pod;
  try {
    pod = await Pod.start(spec);
  } catch (error) {
    await cleanup();
    throw error;
  }
  const hasSidecar = [...(spec.initContainers ?? []), ...spec.containers].some((c) => c.name === SIDECAR);
  return {
    pod,
    adminAddress: envoy.adminAddress,
    listeners: envoy.listeners,
    managerPort: hasSidecar ? (pod.container(SIDECAR).lines.find(managerReady)?.port as number) : undefined,
    readyFile,
    adminCalls: () => envoy.adminCalls(),
    async destroy() {
      await pod.destroy();
      await cleanup();
    },
  };
}
