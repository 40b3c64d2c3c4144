// Real Envoy as a rendered pod's envoy container: the rendered bootstrap through the pod's remap
// (free loopback ports, emptyDir paths), written to a file and passed with the rendered command
// line. Envoy's own admin API sits beside the pod's admin address, where a recording tap listens:
// the pod's containers reach Envoy exactly where the chart told them to, and tests see each call.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { IContainer } from 'kubernetes-models/v1';
import { startAdminTap } from '../real-envoy/admin-tap.js';
import { ensureEnvoyBinary } from '../real-envoy/binary.js';
import { remapBootstrap, withConfigPath } from '../real-envoy/pod-bootstrap.js';
import { adminUp, freePort, withAdminAt } from '../real-envoy/process.js';
import { type Address, addressFlag, type Bootstrap, listeners, type Remap, statPrefix } from './bootstrap.js';

export interface PodEnvoy {
  /** The container's command: the Envoy binary, then the rendered arguments with the written config. */
  readonly command: readonly string[];
  /** The bootstrap Envoy runs: the rendered one, remapped, its admin API moved beside the tap. */
  readonly bootstrap: Bootstrap;
  /** The pod's admin address, where the tap listens. */
  readonly adminAddress: string;
  /** Each listener's port on this machine, by stat prefix. */
  readonly listeners: Readonly<Record<string, number>>;
  /** Resolves once Envoy's admin API answers: the container's readiness. */
  ready(): Promise<void>;
  /** Every admin call made at the pod's admin address, as `METHOD /path?query`. */
  adminCalls(): string[];
  close(): Promise<void>;
}

export async function startPodEnvoy(bootstrapRendered: Bootstrap, envoy: IContainer, remap: Remap): Promise<PodEnvoy> {
  if (envoy.command?.[0]?.endsWith('envoy') !== true) throw new Error(`the envoy container runs ${envoy.command?.join(' ')}, not envoy`);
  const binary = await ensureEnvoyBinary();
  const podBootstrap = remapBootstrap(bootstrapRendered, remap);
  const podAdmin = podBootstrap.admin?.address;
  if (podAdmin === undefined) throw new Error('the bootstrap has no admin address');
  const host = podAdmin.socket_address?.address ?? '127.0.0.1';
  const envoyAdmin: Address = podAdmin.pipe !== undefined ? { pipe: { path: `${podAdmin.pipe.path}.envoy` } } : { socket_address: { address: host, port_value: await freePort(host) } };
  // Clusters that point at the admin API (the stats listener's) go straight to Envoy, not through the tap.
  const bootstrap = withAdminAt(podBootstrap, envoyAdmin);
  const dir = mkdtempSync(join(tmpdir(), 'pod-envoy-'));
  const configPath = join(dir, 'envoy.json');
  writeFileSync(configPath, JSON.stringify(bootstrap));
  const tap = await startAdminTap(addressFlag(envoyAdmin), addressFlag(podAdmin)).catch((error: unknown) => {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  });
  const ports: Record<string, number> = {};
  for (const listener of listeners(bootstrap)) ports[statPrefix(listener)] = listener.address.socket_address?.port_value ?? 0;
  return {
    command: [binary, ...withConfigPath(envoy.args ?? [], configPath), '--use-dynamic-base-id'],
    bootstrap,
    adminAddress: tap.adminAddress,
    listeners: ports,
    ready: () => adminUp(addressFlag(envoyAdmin)),
    adminCalls: () => tap.calls.map((c) => `${c.method} ${c.path}${c.query === '' ? '' : `?${c.query}`}`),
    async close() {
      await tap.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
