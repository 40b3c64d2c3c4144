// The pod this project ships, wired as the chart wires it: the Envoy container (here the Envoy
// stand-in process) whose preStop is `httpGet /shutdown/ready` on the sidecar, and the
// shutdown-manager sidecar (the built binary) whose preStop is exec `envoy-shutdown-manager shutdown`.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BIN } from './cli.js';
import { ENVOY_STAND_IN_BUNDLE } from './envoy/process.js';
import type { EnvoyStandInOptions } from './envoy/stand-in.js';
import { Pod } from './kubelet/pod.js';

export interface EnvoyPodOptions {
  readonly envoy: EnvoyStandInOptions;
  readonly terminationGracePeriodSeconds: number;
  /** Flags for the sidecar's exec hook, after --admin-address and --ready-file. */
  readonly shutdownArgs?: readonly string[];
  /** Flags for the manager, after --port 0 and --ready-file. */
  readonly managerArgs?: readonly string[];
  /** The sidecar container's environment (ENVOY_SHUTDOWN_* as the chart sets them). */
  readonly sidecarEnv?: Readonly<Record<string, string>>;
}

export interface EnvoyPod {
  readonly pod: Pod;
  readonly adminAddress: string;
  readonly listeners: Readonly<Record<string, number>>;
  readonly managerPort: number;
  readonly readyFile: string;
  destroy(): Promise<void>;
}

export const ENVOY = 'envoy';
export const SIDECAR = 'shutdown-manager';

export async function startEnvoyPod(options: EnvoyPodOptions): Promise<EnvoyPod> {
  const sharedVolume = mkdtempSync(join(tmpdir(), 'emptydir-')); // the emptyDir both containers mount
  const readyFile = join(sharedVolume, 'shutdown-ready');
  const envoyReady = (line: Record<string, unknown>): boolean => line['event'] === 'ready';
  const managerReady = (line: Record<string, unknown>): boolean => line['msg'] === 'shutdown manager listening';
  let pod: Pod;
  try {
    pod = await Pod.start({
      terminationGracePeriodSeconds: options.terminationGracePeriodSeconds,
      containers: [
        {
          name: ENVOY,
          command: [process.execPath, ENVOY_STAND_IN_BUNDLE, JSON.stringify(options.envoy)],
          ready: (c) => c.waitForLine(envoyReady),
          preStop: (p) => ({ httpGet: { port: p.container(SIDECAR).lines.find(managerReady)?.['port'] as number, path: '/shutdown/ready' } }),
        },
        {
          name: SIDECAR,
          command: [BIN, 'shutdown-manager', '--port', '0', '--ready-file', readyFile, ...(options.managerArgs ?? [])],
          ...(options.sidecarEnv === undefined ? {} : { env: options.sidecarEnv }),
          ready: (c) => c.waitForLine(managerReady),
          preStop: (p) => ({
            exec: {
              command: [BIN, 'shutdown', '--admin-address', String(p.container(ENVOY).lines.find(envoyReady)?.['adminAddress']), '--ready-file', readyFile, ...(options.shutdownArgs ?? [])],
            },
          }),
        },
      ],
    });
  } catch (error) {
    rmSync(sharedVolume, { recursive: true, force: true });
    throw error;
  }
  const ready = pod.container(ENVOY).lines.find(envoyReady) ?? {};
  return {
    pod,
    adminAddress: String(ready['adminAddress']),
    listeners: ready['listeners'] as Record<string, number>,
    managerPort: pod.container(SIDECAR).lines.find(managerReady)?.['port'] as number,
    readyFile,
    async destroy() {
      await pod.destroy();
      rmSync(sharedVolume, { recursive: true, force: true });
    },
  };
}
