// `status` and `shutdown --dry-run` against real Envoy, started from the chart's bootstrap.
import { existsSync, writeFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanEnv, startCli } from '../support/cli.js';
import { idleHttp1, request } from '../support/protocols/clients.js';
import { type DrainTarget, realEnvoyAndReadyFile } from '../support/real-envoy/drain-target.js';
import { isStatsRead } from '../support/stats-reads.js';
import { waitFor } from '../support/traffic/pod-conditions.js';

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function setup(): Promise<{ envoy: DrainTarget; ready: string }> {
  return realEnvoyAndReadyFile((cleanup) => cleanups.push(cleanup));
}

function run(args: string[], env: Record<string, string> = {}): ReturnType<typeof startCli> {
  const cli = startCli(args, cleanEnv(env));
  cleanups.push(() => {
    cli.child.kill('SIGKILL');
    return cli.result;
  });
  return cli;
}

function json(stdout: string): Record<string, unknown> {
  return JSON.parse(stdout.trim().split('\n').at(-1) ?? '') as Record<string, unknown>;
}

describe('status', () => {
  it('reports state, connections per listener, new connections and no drain, as JSON', async () => {
    const { envoy, ready } = await setup();
    const held = await idleHttp1(envoy.listenerPort('ingress'));
    cleanups.push(() => held.close());
    const status = run([
      'status',
      '--admin-address',
      envoy.adminAddress,
      '--ready-file',
      ready,
      '--connections',
      'listeners',
      '--ignore-listener',
      'stats',
      '--ignore-listener',
      'ready',
      '--interval',
      '500ms',
      '--output',
      'json',
    ]);
    // Two new connections during the measured interval: after status's first read was answered.
    await waitFor('the first count read', () => envoy.calls.some((c) => isStatsRead(c) && c.status === 200));
    await Promise.all([request({ port: envoy.listenerPort('ingress') }, '/'), request({ port: envoy.listenerPort('ingress') }, '/')]);
    const result = await status.result;
    expect(result.code).toBe(0);
    const report = json(result.stdout);
    expect(report).toMatchObject({
      envoy: { reachable: true, state: 'LIVE', healthCheck: 'passing' },
      connections: { source: 'listeners', total: 1, listeners: { ingress: 1 } },
      newConnections: { count: 2 },
      drain: { inProgress: false },
      lastDrain: null,
    });
    expect(Object.keys(report).sort()).toEqual(['at', 'connections', 'drain', 'envoy', 'lastDrain', 'newConnections']);
    expect((report.connections as { listeners: object }).listeners).not.toHaveProperty('stats');
    expect((report.newConnections as { intervalMs: number }).intervalMs).toBeGreaterThanOrEqual(450);
    expect(envoy.calls.every((c) => c.method === 'GET')).toBe(true); // reads only
  });

  it('shows a drain in progress and, afterwards, how it ended', async () => {
    const { envoy, ready } = await setup();
    // A minimum drain far longer than any status run, however busy the machine: it is cut short below.
    const drain = run([
      'shutdown',
      '--admin-address',
      envoy.adminAddress,
      '--ready-file',
      ready,
      '--min-drain-duration',
      '5m',
      '--drain-timeout',
      '10m',
      '--check-interval',
      '100ms',
    ]);
    await drain.waitForLog((l) => l.msg === 'graceful drain started');
    const during = await run(['status', '--admin-address', envoy.adminAddress, '--ready-file', ready, '--interval', '100ms', '--output', 'json']).result;
    expect(json(during.stdout)).toMatchObject({
      envoy: { state: 'DRAINING', healthCheck: 'failing' },
      drain: { inProgress: true, startedBy: 'manual', pid: drain.child.pid, minDrainMs: 300_000, drainTimeoutMs: 600_000 },
    });
    const drainReport = json(during.stdout).drain as { minDrainLeftMs: number; timeoutLeftMs: number };
    expect(drainReport.minDrainLeftMs).toBeGreaterThan(0);
    expect(drainReport.timeoutLeftMs).toBeGreaterThan(drainReport.minDrainLeftMs);
    drain.child.kill('SIGINT');
    expect((await drain.result).code).toBe(130);
    expect(existsSync(`${ready}.draining`)).toBe(false);
    // A drain that runs to its end leaves its report for the next status.
    expect((await run(['shutdown', '--admin-address', envoy.adminAddress, '--ready-file', ready, '--min-drain-duration', '0s']).result).code).toBe(0);
    const after = await run(['status', '--admin-address', envoy.adminAddress, '--ready-file', ready, '--interval', '100ms']).result;
    expect(after.stdout).toMatch(/^drain\s+none in progress in this container$/m);
    expect(after.stdout).toMatch(/^last drain\s+drained: 0 connections left after \d/m);
    expect(after.stdout).toMatch(/^envoy\s+DRAINING, health check failing$/m);
  });

  it('reports a drain-in-progress file whose process is gone as a drain that ended without finishing', async () => {
    const { envoy, ready } = await setup();
    writeFileSync(
      `${ready}.draining`,
      JSON.stringify({ pid: 2 ** 22 + 1, startedAt: new Date().toISOString(), startedBy: 'hook', minDrainMs: 1, drainTimeoutMs: 2, quietPeriodMs: 0 }),
    );
    const result = await run(['status', '--admin-address', envoy.adminAddress, '--ready-file', ready, '--interval', '100ms', '--output', 'json']).result;
    expect(json(result.stdout).drain).toEqual({ inProgress: false, abandoned: { pid: 2 ** 22 + 1, startedAt: expect.any(String), why: 'process gone' } });
  });

  it('exits 1 with a clear message when the admin API is unreachable, still reporting the last drain', async () => {
    const { envoy, ready } = await setup();
    const address = envoy.adminAddress;
    await envoy.close();
    writeFileSync(ready, JSON.stringify({ result: 'timeout', connections: 3, elapsedMs: 60_000, exitCode: 3, finishedAt: '2026-01-01T00:00:00.000Z' }));
    const result = await run(['status', '--admin-address', address, '--ready-file', ready]).result;
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/^envoy\s+unreachable: GET \/server_info to Envoy admin at 127\.0\.0\.1:\d+ failed: .*ECONNREFUSED/m);
    expect(result.stdout).toMatch(/^last drain\s+timeout: 3 connections left after 1m0s/m);
    expect(result.stderr).toBe('');
  });

  it('--watch refreshes until interrupted, then exits 0', async () => {
    const { envoy, ready } = await setup();
    const watch = run(['status', '--admin-address', envoy.adminAddress, '--ready-file', ready, '--interval', '150ms', '--watch', '--output', 'json']);
    await new Promise<void>((resolve) => {
      const check = setInterval(() => {
        if (envoy.calls.filter((c) => c.path === '/server_info').length >= 3) {
          clearInterval(check);
          resolve();
        }
      }, 20);
    });
    watch.child.kill('SIGINT');
    const result = await watch.result;
    expect(result.code).toBe(0);
    const lines = result.stdout.trim().split('\n');
    expect(lines.length).toBeGreaterThanOrEqual(2);
    for (const line of lines) expect(JSON.parse(line)).toHaveProperty('envoy.state', 'LIVE');
  });

  it('rejects a bad option with exit 2', async () => {
    const result = await run(['status', '--output', 'yaml']).result;
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^error: option '--output <format>' argument 'yaml' is invalid/);
  });
});

describe('shutdown --dry-run', () => {
  it('prints the effective configuration with sources, the plan and the counts, and touches nothing', async () => {
    const { envoy, ready } = await setup();
    writeFileSync(ready, 'left by an earlier drain');
    const held = await idleHttp1(envoy.listenerPort('ingress'));
    cleanups.push(() => held.close());
    const result = await run(
      [
        'shutdown',
        '--dry-run',
        '--output',
        'json',
        '--admin-address',
        envoy.adminAddress,
        '--ready-file',
        ready,
        '--ignore-listener',
        'stats',
        '--ignore-listener',
        'ready',
        '--check-interval',
        '200ms',
      ],
      {
        ENVOY_SHUTDOWN_CONNECTIONS: 'listeners',
        ENVOY_SHUTDOWN_QUIET_PERIOD: '5s',
      },
    ).result;
    expect(result.code).toBe(0);
    const report = json(result.stdout);
    expect(report).toMatchObject({
      dryRun: true,
      options: {
        adminAddress: { value: envoy.adminAddress, source: 'flag' },
        connections: { value: 'listeners', source: 'env ENVOY_SHUTDOWN_CONNECTIONS' },
        quietPeriod: { value: '5s', source: 'env ENVOY_SHUTDOWN_QUIET_PERIOD' },
        drainTimeout: { value: '1m0s', source: 'default' },
        ignoreListener: { value: ['stats', 'ready'], source: 'flag' },
      },
      plan: ['POST /healthcheck/fail', 'POST /drain_listeners?graceful&skip_exit', expect.stringMatching(/and no new connection for 5s/), `write ${ready}`],
      readyFileDirectoryWritable: true,
      now: { envoy: { state: 'LIVE' }, connections: { total: 1, listeners: { ingress: 1 } } },
    });
    expect(envoy.calls.every((c) => c.method === 'GET')).toBe(true);
    expect(await envoy.state()).toBe('LIVE');
    expect(existsSync(ready)).toBe(true); // not even the stale ready file is removed
  });

  it('names the variable a ready file came from', async () => {
    const { envoy, ready } = await setup();
    const result = await run(['shutdown', '--dry-run', '--output', 'json', '--admin-address', envoy.adminAddress], { ENVOY_SHUTDOWN_READY_FILE: ready }).result;
    expect(result.code).toBe(0);
    expect(json(result.stdout)).toMatchObject({ options: { readyFile: { value: ready, source: 'env ENVOY_SHUTDOWN_READY_FILE' } } });
  });

  it('shows the delayed health check in the plan, as text', async () => {
    const { envoy, ready } = await setup();
    const result = await run(['shutdown', '--dry-run', '--admin-address', envoy.adminAddress, '--ready-file', ready, '--health-check-failure-delay', '5s'])
      .result;
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^dry run: nothing is sent to Envoy but reads, and no ready file is written \(the writability check leaves none behind\)$/m);
    expect(result.stdout).toMatch(/^ {2}1\. POST \/drain_listeners\?graceful&skip_exit\n {2}2\. POST \/healthcheck\/fail after 5s, unless the drain is over$/m);
    expect(result.stdout).toMatch(/^ {2}healthCheckFailureDelay\s+5s\s+flag$/m);
  });

  it('exits 1 when Envoy cannot be reached, after printing the plan', async () => {
    const { envoy, ready } = await setup();
    const address = envoy.adminAddress;
    await envoy.close();
    const result = await run(['shutdown', '--dry-run', '--admin-address', address, '--ready-file', ready]).result;
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/envoy\s+unreachable/);
  });
});
