// The pod's Envoy container as the chart configures it, on the real Envoy binary: the chart's own
// bootstrap (admin API, stats and readiness listeners, `ingress`) and command line, with `ingress`
// routed to a real upstream. Every fixed port becomes a free loopback port chosen beforehand, so
// the kubelet stand-in can start Envoy as a plain container and the hooks know the admin address;
// the stats listener's admin cluster follows the admin API to its new port.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { connect } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Address, Bootstrap, Cluster, Listener } from '../chart/bootstrap.js';
import { PortMap } from '../chart/chart-pod.js';
import { helmTemplate, parseManifests } from '../chart/helm.js';
import { readPod } from '../chart/manifests.js';
import { ensureEnvoyBinary } from './binary.js';
import { get } from './process.js';

export interface PodEnvoy {
  /** The container's command: the Envoy binary with the chart's flags. */
  readonly command: readonly string[];
  readonly adminAddress: string;
  /** Listener ports by name: `ingress`, `stats`, `ready`. */
  readonly listeners: Readonly<Record<string, number>>;
  /** Resolves once Envoy's admin API reports it live (its listeners are bound by then). */
  ready(timeoutMs?: number): Promise<void>;
  /** Removes the config directory. */
  cleanup(): void;
}

export interface PodEnvoyOptions {
  /** The port of the application `ingress` proxies to (on 127.0.0.1). */
  readonly upstreamPort: number;
  /** Chart values, e.g. `shutdown.drainTimeout` (which is also Envoy's --drain-time-s). */
  readonly values?: Record<string, unknown>;
}

interface RenderedEnvoy {
  readonly bootstrap: Bootstrap;
  readonly args: readonly string[];
}

const renders = new Map<string, Promise<RenderedEnvoy>>();

/** The chart's Envoy bootstrap and args, rendered once per set of values. */
function renderEnvoy(values: Record<string, unknown>): Promise<RenderedEnvoy> {
  const key = JSON.stringify(values);
  let render = renders.get(key);
  if (render === undefined) {
    render = helmTemplate({ values }).then((result) => {
      const pod = readPod(parseManifests(result.stdout));
      return { bootstrap: pod.bootstrap, args: pod.envoy.args ?? [] };
    });
    renders.set(key, render);
  }
  return render;
}

export async function preparePodEnvoy(options: PodEnvoyOptions): Promise<PodEnvoy> {
  const [binary, rendered] = await Promise.all([ensureEnvoyBinary(), renderEnvoy(options.values ?? {})]);
  const { bootstrap } = rendered;
  const adminSocket = bootstrap.admin?.address?.socket_address;
  if (adminSocket === undefined) throw new Error('the chart put the admin API on no TCP address; this pod needs one');
  const listeners = bootstrap.static_resources?.listeners ?? [];
  const fixed = [adminSocket.port_value, ...listeners.map((l) => l.address.socket_address?.port_value ?? 0)];
  const ports = await PortMap.reserve(fixed);
  const moved = (address: Address): Address => {
    const socket = address.socket_address;
    if (socket === undefined) return address;
    return { socket_address: { address: socket.address === '0.0.0.0' ? '127.0.0.1' : socket.address, port_value: ports.port(socket.port_value) } };
  };
  const config: Bootstrap = {
    ...bootstrap,
    admin: { ...bootstrap.admin, address: moved(bootstrap.admin!.address!) },
    static_resources: {
      listeners: listeners.map((l) => ({ ...(l.name === 'ingress' ? toUpstream(l) : l), address: moved(l.address) })),
      clusters: [...(bootstrap.static_resources?.clusters ?? []).map((c) => movedCluster(c, moved)), upstreamCluster(options.upstreamPort)],
    },
  };
  const dir = mkdtempSync(join(tmpdir(), 'pod-envoy-'));
  const configPath = join(dir, 'envoy.json');
  writeFileSync(configPath, JSON.stringify(config));
  const adminAddress = `127.0.0.1:${ports.port(adminSocket.port_value)}`;
  const listenerPorts = Object.fromEntries(listeners.map((l) => [l.name, ports.port(l.address.socket_address?.port_value ?? 0)]));
  return {
    command: [binary, '--config-path', configPath, ...chartFlags(rendered.args), '--use-dynamic-base-id', '--log-level', 'warning'],
    adminAddress,
    listeners: listenerPorts,
    async ready(timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      // Envoy offers no event for "live" but its own answer: ask until it says so.
      while ((await get(adminAddress, '/ready').catch(() => ({ status: 0 }))).status !== 200) {
        if (Date.now() > deadline) throw new Error(`envoy's admin API at ${adminAddress} was not live in ${timeoutMs} ms`);
        await sleep(20);
      }
      // LIVE comes before the workers listen on their sockets: a connection then is refused.
      for (const [name, port] of Object.entries(listenerPorts)) {
        while (!(await accepts(port))) {
          if (Date.now() > deadline) throw new Error(`envoy's listener ${name} on port ${port} accepted no connection in ${timeoutMs} ms`);
          await sleep(20);
        }
      }
    },
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
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

/** The chart's Envoy flags without the config path (ours differs) and the log level (quieter here). */
function chartFlags(args: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i += 1) {
    if (args[i] === '--config-path' || args[i] === '--log-level') i += 1;
    else out.push(args[i] as string);
  }
  return out;
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
    load_assignment: { cluster_name: 'upstream', endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: port } } } }] }] },
  };
  return cluster as unknown as Cluster;
}

function movedCluster(cluster: Cluster, moved: (address: Address) => Address): Cluster {
  const assignment = cluster.load_assignment;
  if (assignment === undefined) return cluster;
  return {
    ...cluster,
    load_assignment: {
      ...assignment,
      endpoints: (assignment.endpoints ?? []).map((e) => ({
        ...e,
        lb_endpoints: (e.lb_endpoints ?? []).map((lb) => (lb.endpoint?.address === undefined ? lb : { ...lb, endpoint: { ...lb.endpoint, address: moved(lb.endpoint.address) } })),
      })),
    },
  };
}
