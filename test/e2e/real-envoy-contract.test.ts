// The drain contract on real Envoy, started from the chart's own bootstrap and command line
// (`--drain-strategy immediate --drain-time-s N`), driven by the built binary with the chart's own
// sidecar environment; only addresses and durations are changed for the test.
import { readFileSync } from 'node:fs';
import { Agent } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanEnv, type RunningCli, startCli, tempDir } from '../support/cli.js';
import { pollUntil } from '../support/poll.js';
import { http1Answer, idleHttp1, request } from '../support/protocols/clients.js';
import { type AdminKind, type ChartEnvoy, startChartEnvoy } from '../support/real-envoy/chart-envoy.js';
import { get } from '../support/real-envoy/process.js';

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function chartEnvoy(admin: AdminKind = 'ipv4', drainTimeS?: number): Promise<ChartEnvoy> {
  const envoy = await startChartEnvoy({ admin, ...(drainTimeS === undefined ? {} : { drainTimeS }) });
  cleanups.push(() => envoy.stop());
  return envoy;
}

function readyPath(): string {
  const dir = tempDir();
  cleanups.push(dir.cleanup);
  return `${dir.path}/ready`;
}

/** The chart's sidecar environment pointed at this Envoy and ready file, with test-sized durations. */
function chartEnv(envoy: ChartEnvoy, ready: string, overrides: Record<string, string> = {}): Record<string, string> {
  return cleanEnv({
    ...envoy.rendered.sidecarEnv,
    ENVOY_SHUTDOWN_ADMIN_ADDRESS: envoy.adminAddress,
    ENVOY_SHUTDOWN_READY_FILE: ready,
    ENVOY_SHUTDOWN_PORT: '0',
    ENVOY_SHUTDOWN_MIN_DRAIN_DURATION: '300ms',
    ENVOY_SHUTDOWN_DRAIN_TIMEOUT: '10s',
    ENVOY_SHUTDOWN_QUIET_PERIOD: '0s',
    ENVOY_SHUTDOWN_CHECK_INTERVAL: '100ms',
    // These tests count idle connections; ignoring them needs a quiet period, which they leave at 0.
    ENVOY_SHUTDOWN_IGNORE_IDLE_CONNECTIONS: 'false',
    ...overrides,
  });
}

function run(args: readonly string[], env: Record<string, string>): RunningCli {
  const cli = startCli(args, env);
  cleanups.push(() => {
    cli.child.kill('SIGKILL');
    return cli.result.catch(() => undefined);
  });
  return cli;
}

function report(path: string): Record<string, unknown> {
  return JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
}

function lastJson(stdout: string): Record<string, unknown> {
  return JSON.parse(stdout.trim().split('\n').at(-1) ?? '') as Record<string, unknown>;
}

describe.each<AdminKind>(['ipv4', 'ipv6', 'unix'])("the chart's drain on real Envoy, admin on %s", (admin) => {
  it('dry run, then health check fail, graceful drain with skip_exit, status, minimum drain, drained', async () => {
    // --drain-time-s 1, shorter than the minimum drain: listeners still accept once it has passed.
    const envoy = await chartEnvoy(admin, 1);
    const ready = readyPath();
    const env = chartEnv(envoy, ready, { ENVOY_SHUTDOWN_MIN_DRAIN_DURATION: '1500ms' });
    const ingress = envoy.ports.ingress as number;
    // A Prometheus scraper's idle keep-alive connection on the ignored stats listener (proxied to the admin API).
    const scraper = await idleHttp1(envoy.ports.stats as number, '/stats/prometheus');
    cleanups.push(() => scraper.close());
    const busyAgent = new Agent({ keepAlive: true, maxSockets: 1 });
    cleanups.push(() => busyAgent.destroy());
    const before = await http1Answer({ port: ingress, agent: busyAgent });
    expect(before.connection).toBeUndefined(); // HTTP/1.1 keeps the connection unless told otherwise

    const dryRun = await run(['shutdown', '--dry-run', '--output', 'json'], env).result;
    expect(dryRun.code).toBe(0);
    expect(lastJson(dryRun.stdout)).toMatchObject({
      options: { connections: { value: 'listeners' }, ignoreListener: { value: ['stats', 'ready'] } },
      now: { envoy: { state: 'LIVE' }, connections: { total: 1, listeners: { ingress: 1 } } },
    });
    expect((await get(envoy.adminAddress, '/ready')).status).toBe(200);

    const cli = run(['shutdown'], env);
    await cli.waitForLog((l) => l.msg === 'graceful drain started');
    // Health check failed: Envoy's admin /ready, /server_info and the readiness listener all say so.
    expect(await get(envoy.adminAddress, '/ready')).toMatchObject({ status: 503, body: 'DRAINING\n' });
    expect((await request({ port: envoy.ports.ready as number }, '/ready')).status).toBe(503);
    const during = await run(['status', '--output', 'json', '--interval', '100ms'], env).result;
    expect(lastJson(during.stdout)).toMatchObject({ envoy: { state: 'DRAINING', healthCheck: 'failing' }, drain: { inProgress: true } });
    // Draining: a new connection is still served, each response now closes its connection.
    const fresh = await request({ port: ingress }, '/');
    expect(fresh.status).toBe(200);
    expect(fresh.headers.connection).toBe('close');
    const after = await http1Answer({ port: ingress, agent: busyAgent });
    expect(after).toMatchObject({ status: 200, connection: 'close' });
    expect(after.socket).toBe(before.socket);

    const result = await cli.result;
    expect(result.code).toBe(0);
    expect(report(ready)).toMatchObject({ result: 'drained', connections: 0, exitCode: 0 });
    expect(result.logs.find((l) => l.msg === 'shutdown finished')?.elapsedMs).toBeGreaterThanOrEqual(1_500);
    // skip_exit: Envoy is still up, and still accepts on every listener, past --drain-time-s.
    expect(envoy.child.exitCode).toBeNull();
    expect((await request({ port: ingress }, '/')).status).toBe(200);
    expect((await request({ port: envoy.ports.stats as number }, '/stats/prometheus')).status).toBe(200);
    expect(scraper.socket.destroyed).toBe(false);
  });
});

describe('counting connections on real Envoy', () => {
  it('an idle keep-alive client connection outlives the drain: the drain runs to its timeout, exit 3', async () => {
    const envoy = await chartEnvoy();
    const ready = readyPath();
    const idle = await idleHttp1(envoy.ports.ingress as number);
    cleanups.push(() => idle.close());
    const result = await run(['shutdown', '--connections', 'listeners', '--drain-timeout', '1500ms'], chartEnv(envoy, ready)).result;
    expect(result.code).toBe(3);
    expect(report(ready)).toMatchObject({ result: 'timeout', connections: 1, exitCode: 3 });
    expect(result.logs.map((l) => l.msg)).toContain('drain timeout exceeded');
    expect(idle.socket.destroyed).toBe(false); // neither Envoy nor the tool closed it
  });

  it('finishes at --exit-at-connections', async () => {
    const envoy = await chartEnvoy();
    const ready = readyPath();
    const a = await idleHttp1(envoy.ports.ingress as number);
    const b = await idleHttp1(envoy.ports.ingress as number);
    cleanups.push(
      () => a.close(),
      () => b.close(),
    );
    const result = await run(['shutdown', '--exit-at-connections', '2'], chartEnv(envoy, ready)).result;
    expect(result.code).toBe(0);
    expect(report(ready)).toMatchObject({ result: 'drained', connections: 2 });
  });

  it('ends when the last client connection closes, read from the live listener gauge', async () => {
    const envoy = await chartEnvoy();
    const ready = readyPath();
    const held = await idleHttp1(envoy.ports.ingress as number);
    const cli = run(['shutdown'], chartEnv(envoy, ready, { ENVOY_SHUTDOWN_DRAIN_TIMEOUT: '30s' }));
    await cli.waitForLog((l) => l.msg === 'minimum drain period reached');
    expect(cli.child.exitCode).toBeNull();
    await held.close();
    const result = await cli.result;
    expect(result.code).toBe(0);
    expect(report(ready)).toMatchObject({ result: 'drained', connections: 0 });
  });

  it('`total` counts the scraper on the stats listener once a stats flush saw it; `listeners` leaves it out', async () => {
    const envoy = await chartEnvoy();
    const scraper = await idleHttp1(envoy.ports.stats as number, '/stats/prometheus');
    cleanups.push(() => scraper.close());
    // server.total_connections moves only at Envoy's stats flush (every 5 s with the chart's bootstrap).
    let value = Number.NaN;
    await pollUntil(
      'a stats flush counting the scraper',
      async () => {
        const answer = await get(envoy.adminAddress, '/stats?filter=^server\\.total_connections$&format=json');
        value = (JSON.parse(answer.body) as { stats: Array<{ value: number }> }).stats[0]?.value ?? Number.NaN;
        return value === 1;
      },
      { timeoutMs: 30_000, everyMs: 50, lastSeen: () => `server.total_connections ${value}` },
    );
    const totalReady = readyPath();
    const total = await run(['shutdown', '--connections', 'total', '--drain-timeout', '1s'], chartEnv(envoy, totalReady)).result;
    expect(total.code).toBe(3);
    expect(report(totalReady)).toMatchObject({ result: 'timeout', connections: 1 });
    const listenersReady = readyPath();
    const listeners = await run(['shutdown'], chartEnv(envoy, listenersReady)).result;
    expect(listeners.code).toBe(0);
    expect(report(listenersReady)).toMatchObject({ result: 'drained', connections: 0 });
  }, 30_000);
});

describe('the manager handshake with real Envoy', () => {
  it("holds Envoy's preStop until the sidecar's hook drained real Envoy, which stays up until its SIGTERM", async () => {
    const envoy = await chartEnvoy();
    const ready = readyPath();
    const env = chartEnv(envoy, ready, { ENVOY_SHUTDOWN_MIN_DRAIN_DURATION: '800ms' });
    const manager = run(['shutdown-manager'], env);
    const port = (await manager.waitForLog((l) => l.msg === 'shutdown manager listening')).port as number;
    const header = envoy.rendered.envoy.lifecycle?.preStop?.httpGet?.httpHeaders?.[0];
    expect(header?.name).toBe('X-Envoy-Shutdown-Token');
    // Envoy's own preStop, as kubelet sends it: held until the drain ends.
    const envoyHook = request({ port }, envoy.rendered.envoy.lifecycle?.preStop?.httpGet?.path ?? '', {
      headers: { [header?.name ?? '']: header?.value ?? '' },
    });
    // The sidecar's preStop, the rendered exec command (its first word is the image's executable).
    const hookArgs = envoy.rendered.sidecar.lifecycle?.preStop?.exec?.command?.slice(1) ?? [];
    expect(hookArgs).toEqual(['shutdown', '--require-envoy-prestop']);
    const hook = run(hookArgs, env);
    const answer = await envoyHook;
    const hookResult = await hook.result;
    expect(hookResult.code).toBe(0);
    expect(hookResult.logs.map((l) => l.msg)).toContain("envoy's preStop hook reached the manager: the pod is terminating");
    expect(answer.status).toBe(200);
    // Released by the ready file the hook wrote: the answer carries its drain report.
    expect(JSON.parse(answer.body)).toMatchObject({ ...report(ready), result: 'drained' });
    // Drained, failing health checks, still serving until kubelet's SIGTERM, which it then obeys at once.
    expect(await get(envoy.adminAddress, '/ready')).toMatchObject({ status: 503 });
    expect((await request({ port: envoy.ports.ingress as number }, '/')).status).toBe(200);
    envoy.child.kill('SIGTERM');
    expect(await envoy.exited).toEqual({ code: 0, signal: null });
  });
});
