// Starts the real Envoy (the pinned binary of test/setup/envoy.mjs) from a bootstrap object, on ports
// the kernel picks: every listener's port_value becomes 0, the admin API gets a free port chosen
// up front (or stays on its Unix socket), and the ports Envoy really bound are read back from its
// admin API. Loopback only: 0.0.0.0 and :: listeners are rebound to 127.0.0.1 / ::1.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Address, Bootstrap, Cluster, Listener } from '../chart/bootstrap.js';
import { pollFor, pollUntil } from '../poll.js';
import { freePort } from '../ports.js';
import { ensureEnvoyBinary } from './binary.js';

export interface RealEnvoyOptions {
  readonly bootstrap: Bootstrap;
  /** Envoy's command line after the config: the chart's `--drain-strategy immediate --drain-time-s N`. */
  readonly args?: readonly string[];
  /** How long to wait for the admin API and every listener; Envoy starts in 70–400 ms here. */
  readonly readyTimeoutMs?: number;
}

export interface RealEnvoy {
  readonly child: ChildProcess;
  /** As our --admin-address takes it: `127.0.0.1:PORT`, `[::1]:PORT` or `unix:/path`. */
  readonly adminAddress: string;
  /** The port each TCP listener bound, by listener name. */
  readonly ports: Readonly<Record<string, number>>;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Envoy's own log so far (stderr). */
  log(): string;
  /** SIGTERM (Envoy exits within ~200 ms), SIGKILL if it has not after `graceMs`; removes the temp dir. */
  stop(graceMs?: number): Promise<void>;
}

export async function startRealEnvoy(options: RealEnvoyOptions): Promise<RealEnvoy> {
  const binary = await ensureEnvoyBinary();
  const dir = mkdtempSync(join(tmpdir(), 'real-envoy-'));
  const config = join(dir, 'envoy.json');
  const adminPathFile = join(dir, 'admin-address');
  const bootstrap = onEphemeralPorts(await withFreeAdminPort(options.bootstrap));
  writeFileSync(config, JSON.stringify(bootstrap));
  const args = [
    '--config-path',
    config,
    ...(options.args ?? []),
    '--admin-address-path',
    adminPathFile,
    '--use-dynamic-base-id',
    '--concurrency',
    '1',
    '--log-level',
    'warning',
  ];
  const child = spawn(binary, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  void exited.then((e) => (exit = e));

  const stop = async (graceMs = 5_000): Promise<void> => {
    if (exit === undefined) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    }
    rmSync(dir, { recursive: true, force: true });
  };

  try {
    const deadline = Date.now() + (options.readyTimeoutMs ?? 15_000);
    const adminAddress = await whileRunning(
      'envoy admin address',
      deadline,
      () => exit,
      () => adminAddressOf(bootstrap.admin?.address, adminPathFile),
    );
    const ports = await whileRunning(
      'envoy listeners',
      deadline,
      () => exit,
      () => listenerPorts(adminAddress),
    );
    return { child, adminAddress, ports, exited, log: () => stderr, stop };
  } catch (error) {
    await stop(0);
    throw new Error(`${(error as Error).message}\n${stderr.slice(-2_000)}`);
  }
}

/** Polls `probe` until it returns a value (Envoy offers no event for "admin up" beyond its own answers); fails at once if Envoy exits. */
function whileRunning<T>(what: string, deadline: number, exited: () => unknown, probe: () => Promise<T | undefined>): Promise<T> {
  return pollFor(
    what,
    async () => {
      if (exited() !== undefined) throw new Error(`envoy exited before it was ready: ${JSON.stringify(exited())}`);
      return probe().catch(() => undefined);
    },
    { timeoutMs: Math.max(0, deadline - Date.now()) },
  );
}

async function adminAddressOf(address: Address | undefined, adminPathFile: string): Promise<string | undefined> {
  if (address?.pipe !== undefined) {
    const path = address.pipe.path;
    return (await get(`unix:${path}`, '/ready')).status === 200 ? `unix:${path}` : undefined;
  }
  let written: string;
  try {
    written = readFileSync(adminPathFile, 'utf8').trim();
  } catch {
    return undefined;
  }
  if (written === '') return undefined;
  // Envoy writes `127.0.0.1:PORT` or `[::1]:PORT`, the form --admin-address takes.
  return (await get(written, '/ready')).status === 200 ? written : undefined;
}

async function listenerPorts(adminAddress: string): Promise<Record<string, number> | undefined> {
  const { status, body } = await get(adminAddress, '/listeners?format=json');
  if (status !== 200) return undefined;
  const parsed = JSON.parse(body) as { listener_statuses?: Array<{ name: string; local_address?: { socket_address?: { port_value?: number } } }> };
  const ports: Record<string, number> = {};
  for (const status of parsed.listener_statuses ?? []) {
    const port = status.local_address?.socket_address?.port_value;
    if (port === undefined || port === 0) return undefined;
    ports[status.name] = port;
  }
  return ports;
}

/** One admin GET, to a TCP `host:port` or a `unix:/path`; bounded in time. */
export function get(
  adminAddress: string,
  path: string,
  method = 'GET',
): Promise<{ status: number; body: string; headers: Record<string, string | string[] | undefined> }> {
  const target = adminAddress.startsWith('unix:')
    ? { socketPath: adminAddress.slice('unix:'.length) }
    : (() => {
        const match = /^\[?([^\]]+?)\]?:(\d+)$/.exec(adminAddress);
        if (match === null) throw new Error(`not an admin address: ${adminAddress}`);
        return { host: match[1], port: Number(match[2]) };
      })();
  return new Promise((resolve, reject) => {
    const req = request({ ...target, path, method, timeout: 2_000 }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
    });
    req.on('timeout', () => req.destroy(new Error(`${method} ${path}: no answer in 2 s`)));
    req.on('error', reject);
    req.end();
  });
}

/**
 * The admin API on a port chosen before Envoy starts: a cluster that proxies to the admin API (the
 * chart's stats listener serves /stats/prometheus that way) must name the port Envoy binds, which
 * port 0 would leave unknown. Node binds port 0 on the same host, and the port it got is reused.
 */
async function withFreeAdminPort(bootstrap: Bootstrap): Promise<Bootstrap> {
  const socket = bootstrap.admin?.address?.socket_address;
  if (socket === undefined) return bootstrap;
  const host = onLoopback(socket.address);
  return withAdminAt(bootstrap, { socket_address: { address: host, port_value: await freePort(host) } });
}

/** Resolves once the admin API answers GET /ready (200 or 503: it is up); throws after `timeoutMs`. */
export async function adminUp(adminAddress: string, timeoutMs = 15_000): Promise<void> {
  await pollUntil(
    `Envoy's admin API at ${adminAddress} answering`,
    async () => {
      const status = await get(adminAddress, '/ready').then(
        (answer) => answer.status,
        () => 0,
      );
      return status === 200 || status === 503;
    },
    { timeoutMs },
  );
}

/** The bootstrap with its admin API at `address`, and every cluster endpoint that named the old admin address naming the new one. */
export function withAdminAt(bootstrap: Bootstrap, address: Address): Bootstrap {
  const old = JSON.stringify(bootstrap.admin?.address);
  const clusters = (bootstrap.static_resources?.clusters ?? []).map((cluster: Cluster) => {
    if (cluster.load_assignment === undefined) return cluster;
    const endpoints = (cluster.load_assignment.endpoints ?? []).map((group) => ({
      ...group,
      lb_endpoints: (group.lb_endpoints ?? []).map((lb) =>
        JSON.stringify(lb.endpoint?.address) === old ? { ...lb, endpoint: { ...lb.endpoint, address } } : lb,
      ),
    }));
    return { ...cluster, load_assignment: { ...cluster.load_assignment, endpoints } };
  });
  return { ...bootstrap, admin: { ...bootstrap.admin, address }, static_resources: { ...bootstrap.static_resources, clusters } };
}

function onLoopback(host: string): string {
  return host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host;
}

/** A copy of the bootstrap whose listeners bind kernel-chosen loopback ports. */
function onEphemeralPorts(bootstrap: Bootstrap): Bootstrap {
  const loopback = (address: Address): Address => {
    if (address.socket_address === undefined) return address;
    return { ...address, socket_address: { ...address.socket_address, address: onLoopback(address.socket_address.address), port_value: 0 } };
  };
  const listeners = (bootstrap.static_resources?.listeners ?? []).map((l: Listener) => ({ ...l, address: loopback(l.address) }));
  return { ...bootstrap, static_resources: { ...bootstrap.static_resources, listeners } };
}
