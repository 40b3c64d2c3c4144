// Real Envoy as a rendered pod's envoy container: the rendered bootstrap through the pod's remap
// (free loopback ports, emptyDir paths), written to a file and passed with the rendered command
// line. Envoy's own admin API sits beside the pod's admin address, where a recording tap listens:
// the pod's containers reach Envoy exactly where the chart told them to, and tests see each call.
// startChartPodEnvoy renders the chart itself, for pods wired by hand (test/support/envoy-pod.ts).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import type { IContainer } from 'kubernetes-models/v1';
import { pollUntil } from '../poll.js';
import { freePort } from '../ports.js';
import { startAdminTap } from '../real-envoy/admin-tap.js';
import { ensureEnvoyBinary } from '../real-envoy/binary.js';
import { remapBootstrap, withConfigPath } from '../real-envoy/pod-bootstrap.js';
import { adminUp, withAdminAt } from '../real-envoy/process.js';
import { type Address, addressFlag, type Bootstrap, type Cluster, type Listener, listeners, type Remap, statPrefix } from './bootstrap.js';
import { PortMap } from './chart-pod.js';
import { helmTemplate, parseManifests } from './helm.js';
import { type RenderedPod, readPod } from './manifests.js';

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
  const envoyAdmin: Address =
    podAdmin.pipe !== undefined ? { pipe: { path: `${podAdmin.pipe.path}.envoy` } } : { socket_address: { address: host, port_value: await freePort(host) } };
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
    // The rendered args only: the chart's --disable-hot-restart lets pods share this network namespace.
    command: [binary, ...withConfigPath(envoy.args ?? [], configPath)],
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

export interface ChartPodEnvoyOptions {
  /** The port of the application `ingress` proxies to (on 127.0.0.1). */
  readonly upstreamPort: number;
  /** Chart values, e.g. `shutdown.drainTimeout` (also Envoy's --drain-time-s) or `admin.unixSocket`. */
  readonly values?: Record<string, unknown>;
  /** The pod's shared emptyDir: where a Unix admin socket (its file name kept) lands. */
  readonly podDir: string;
  /** The bootstrap's `stats_flush_interval` (the chart leaves Envoy's 5 s default), e.g. `10s`. */
  readonly statsFlushInterval?: string;
}

const renders = new Map<string, Promise<RenderedPod>>();

/** The chart's pod, rendered once per set of values. */
function renderPod(values: Record<string, unknown>): Promise<RenderedPod> {
  const key = JSON.stringify(values);
  let render = renders.get(key);
  if (render === undefined) {
    render = helmTemplate({ values }).then((result) => readPod(parseManifests(result.stdout)));
    renders.set(key, render);
  }
  return render;
}

/**
 * The chart's Envoy container, rendered from `values`, with `ingress` routed to the upstream: every
 * fixed port becomes a free loopback port chosen beforehand, so the kubelet stand-in can start it
 * as a plain container and the hooks know its admin address (the tap's). Ready once its admin API
 * answers and every listener accepts a connection.
 */
export async function startChartPodEnvoy(options: ChartPodEnvoyOptions): Promise<PodEnvoy> {
  const rendered = await renderPod(options.values ?? {});
  const bootstrap: Bootstrap = {
    ...routedToUpstream(rendered.bootstrap, options.upstreamPort),
    ...(options.statsFlushInterval === undefined ? {} : { stats_flush_interval: options.statsFlushInterval }),
  };
  const adminPort = rendered.bootstrap.admin?.address?.socket_address?.port_value;
  const fixed = [...(adminPort === undefined ? [] : [adminPort]), ...listeners(bootstrap).map((l) => l.address.socket_address?.port_value ?? 0)];
  const ports = await PortMap.reserve(fixed);
  const remap: Remap = {
    port: (port) => (port === options.upstreamPort ? port : ports.port(port)),
    path: (path) => join(options.podDir, basename(path)),
  };
  const envoy = await startPodEnvoy(bootstrap, rendered.envoy, remap);
  return {
    ...envoy,
    async ready() {
      await envoy.ready();
      // The admin API answers before the workers listen on their sockets: a connection then is refused.
      const deadline = Date.now() + 15_000;
      for (const [name, port] of Object.entries(envoy.listeners)) {
        await pollUntil(`envoy's listener ${name} on port ${port} accepting`, () => accepts(port), { timeoutMs: Math.max(0, deadline - Date.now()) });
      }
    },
  };
}

/** One TCP connection to the port, closed at once: true when it was accepted. */
function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** The bootstrap with `ingress` proxying every request to the application on 127.0.0.1:`upstreamPort`. */
export function routedToUpstream(bootstrap: Bootstrap, upstreamPort: number): Bootstrap {
  return {
    ...bootstrap,
    static_resources: {
      listeners: listeners(bootstrap).map((l) => (l.name === 'ingress' ? toUpstream(l) : l)),
      clusters: [...(bootstrap.static_resources?.clusters ?? []), upstreamCluster(upstreamPort)],
    },
  };
}

/** `ingress` with its HTTP connection manager routing everything to the upstream, without a route timeout. */
function toUpstream(listener: Listener): Listener {
  const filterChains = (listener.filter_chains ?? []).map((chain) => ({
    ...chain,
    filters: (chain.filters ?? []).map((filter) =>
      filter.typed_config === undefined || !String(filter.typed_config['@type']).endsWith('HttpConnectionManager')
        ? filter
        : {
            ...filter,
            typed_config: {
              ...filter.typed_config,
              route_config: {
                name: 'upstream',
                virtual_hosts: [{ name: 'upstream', domains: ['*'], routes: [{ match: { prefix: '/' }, route: { cluster: 'upstream', timeout: '0s' } }] }],
              },
            },
          },
    ),
  }));
  return { ...listener, filter_chains: filterChains };
}

function upstreamCluster(port: number): Cluster {
  const cluster: Record<string, unknown> = {
    name: 'upstream',
    type: 'STATIC',
    connect_timeout: '1s',
    load_assignment: {
      cluster_name: 'upstream',
      endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: port } } } }] }],
    },
  };
  return cluster as unknown as Cluster;
}
