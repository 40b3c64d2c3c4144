// Envoy Gateway's shutdown design, simulated in this process for comparison: `envoy shutdown`
// polls the connection count every 1 s and creates the ready file; `/shutdown/ready` looks for
// that file every 1 s. Modelled on internal/cmd/envoy/shutdown_manager.go (see
// /work/shared/reference/peers.md): the same admin calls, the same stat filter and skip rules,
// a plain sleep of 1 s between reads and between file checks.
import { existsSync, writeFileSync } from 'node:fs';
import { Agent, createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { sleep } from './processes.js';

/** Envoy Gateway's fixed sleep between two reads, and between two looks for the ready file. */
export const EG_POLL_MS = 1_000;
/** Its current connection query: every listener's live gauge. */
export const EG_STATS_PATH = '/stats?filter=^listener\\..*\\.downstream_cx_active$&format=json';
/** Stats it skips: substring matches, as in its source. */
const EG_SKIPPED = ['admin', '19001', '19003', 'worker'];

interface AdminTarget {
  readonly host: string;
  readonly port: number;
}

export function parseAdminAddress(address: string): AdminTarget {
  const separator = address.lastIndexOf(':');
  return { host: address.slice(0, separator), port: Number(address.slice(separator + 1)) };
}

/** One admin call on a kept-alive connection (Go's http client keeps its connections too). */
export function adminCall(target: AdminTarget, agent: Agent, method: 'GET' | 'POST', path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request({ ...target, agent, method, path }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      res.on('end', () => (res.statusCode === 200 ? resolve(body) : reject(new Error(`${method} ${path}: ${res.statusCode}`))));
    });
    req.on('error', reject);
    req.end();
  });
}

function egConnections(body: string): number {
  const { stats } = JSON.parse(body) as { stats: Array<{ name: string; value: number }> };
  return stats.filter((stat) => !EG_SKIPPED.some((skip) => stat.name.includes(skip))).reduce((sum, stat) => sum + stat.value, 0);
}

/**
 * `envoy-gateway envoy shutdown`: fail the health check, start the drain, then read, and sleep
 * 1 s, until the minimum drain has passed and no connection is left; then create the ready file.
 * Resolves with performance.now() when the file exists (the Go process exits right after).
 */
export async function egShutdown(adminAddress: string, readyFile: string, minDrainMs: number, drainTimeoutMs: number): Promise<number> {
  const target = parseAdminAddress(adminAddress);
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const startedAt = performance.now();
  try {
    await adminCall(target, agent, 'POST', '/healthcheck/fail');
    await adminCall(target, agent, 'POST', '/drain_listeners?graceful&skip_exit');
    for (;;) {
      const elapsed = performance.now() - startedAt;
      const connections = egConnections(await adminCall(target, agent, 'GET', EG_STATS_PATH));
      if (elapsed > minDrainMs && connections <= 0) break;
      if (elapsed > drainTimeoutMs) break;
      await sleep(EG_POLL_MS);
    }
    writeFileSync(readyFile, '');
    return performance.now();
  } finally {
    agent.destroy();
  }
}

/** Its `/shutdown/ready` handler: look for the file, sleep 1 s, look again. */
export async function startEgReadyServer(readyFile: string): Promise<{ port: number; close(): void }> {
  const server = createServer((req, res) => {
    void (async () => {
      while (!existsSync(readyFile)) await sleep(EG_POLL_MS);
      res.end();
    })();
    req.resume();
  });
  await new Promise<void>((resolve) => server.listen({ host: '127.0.0.1', port: 0 }, resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}
