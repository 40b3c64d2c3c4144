// Issue 6 at process level: a preStop without pod termination does not drain; no drain, no
// hostage; the native-sidecar drain endpoint only for the pod's own hook.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanEnv, type RunningCli, startCli, tempDir } from '../support/cli.js';
import { request } from '../support/protocols/clients.js';
import { type DrainTarget, startDrainTarget } from '../support/real-envoy/drain-target.js';
import { waitFor } from '../support/traffic/pod-conditions.js';

const TOKEN = 'a-per-release-token-0123456789';
const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Real Envoy from the chart's bootstrap, behind a tap that records the admin calls. */
async function realEnvoy(): Promise<DrainTarget> {
  const envoy = await startDrainTarget();
  cleanups.push(() => envoy.close());
  return envoy;
}

function readyFile(): string {
  const dir = tempDir();
  cleanups.push(dir.cleanup);
  return join(dir.path, 'ready');
}

function spawn(args: string[], env: Record<string, string> = {}): RunningCli {
  const cli = startCli(args, cleanEnv(env));
  cleanups.push(() => {
    cli.child.kill('SIGKILL');
    return cli.result;
  });
  return cli;
}

async function manager(ready: string, args: string[] = [], env: Record<string, string> = {}): Promise<{ cli: RunningCli; port: number }> {
  const cli = spawn(['shutdown-manager', '--port', '0', '--ready-file', ready, ...args], env);
  const line = await cli.waitForLog((l) => l.msg === 'shutdown manager listening');
  return { cli, port: line.port as number };
}

const hookArgs = (envoy: DrainTarget, ready: string, extra: string[] = []): string[] => [
  'shutdown',
  '--require-envoy-prestop',
  '--admin-address',
  envoy.adminAddress,
  '--ready-file',
  ready,
  '--min-drain-duration',
  '200ms',
  '--drain-timeout',
  '5s',
  '--check-interval',
  '100ms',
  ...extra,
];

describe('shutdown --require-envoy-prestop', () => {
  it("drains when Envoy's preStop hook reached the manager", async () => {
    const envoy = await realEnvoy();
    const ready = readyFile();
    const { port } = await manager(ready, [], { ENVOY_SHUTDOWN_HOOK_TOKEN: TOKEN });
    const hook = request({ port }, '/shutdown/ready', { headers: { 'X-Envoy-Shutdown-Token': TOKEN } });
    const result = await spawn(hookArgs(envoy, ready)).result;
    expect(result.code).toBe(0);
    expect(result.logs.map((l) => l.msg)).toContain("envoy's preStop hook reached the manager: the pod is terminating");
    expect(envoy.calls.map((c) => c.path).slice(0, 2)).toEqual(['/healthcheck/fail', '/drain_listeners']);
    expect((await hook).status).toBe(200);
  });

  it('does not touch Envoy when only the sidecar is restarted (no Envoy preStop)', async () => {
    const envoy = await realEnvoy();
    const ready = readyFile();
    await manager(ready, [], { ENVOY_SHUTDOWN_HOOK_TOKEN: TOKEN });
    const result = await spawn(hookArgs(envoy, ready, ['--envoy-prestop-wait', '500ms'])).result;
    expect(result.code).toBe(0);
    expect(envoy.calls).toHaveLength(0);
    expect(await envoy.state()).toBe('LIVE');
    expect(existsSync(ready)).toBe(false);
    expect(existsSync(`${ready}.draining`)).toBe(false);
    expect(result.logs.at(-2)?.msg).toMatch(/^no sign of Envoy's preStop hook: the pod is not terminating/);
    expect(result.logs.at(-1)).toMatchObject({ msg: 'shutdown finished', result: 'not-terminating', exitCode: 0 });
  });

  it('is not fooled by a request without the hook token from elsewhere in the cluster', async () => {
    const envoy = await realEnvoy();
    const ready = readyFile();
    const { cli, port } = await manager(ready, [], { ENVOY_SHUTDOWN_HOOK_TOKEN: TOKEN });
    const stranger = new AbortController();
    void request({ port }, '/shutdown/ready', { signal: stranger.signal, headers: { 'X-Envoy-Shutdown-Token': 'guessed-guessed-guessed' } }).catch(
      () => undefined,
    );
    await cli.waitForLog((l) => l.msg === 'waiting for the drain to finish' && l.envoyPrestop === false);
    const result = await spawn(hookArgs(envoy, ready, ['--envoy-prestop-wait', '500ms'])).result;
    stranger.abort();
    expect(result.code).toBe(0);
    expect(envoy.calls).toHaveLength(0);
  });

  it('is not fooled by an envoy-prestop record left from long ago, nor by a restarted manager', async () => {
    const envoy = await realEnvoy();
    const ready = readyFile();
    writeFileSync(`${ready}.envoy-prestop`, JSON.stringify({ at: new Date(Date.now() - 120_000).toISOString() }));
    expect((await spawn(hookArgs(envoy, ready, ['--envoy-prestop-wait', '300ms'])).result).code).toBe(0);
    expect(envoy.calls).toHaveLength(0);
    // A fresh record written by an earlier manager is removed when the manager starts again.
    writeFileSync(`${ready}.envoy-prestop`, JSON.stringify({ at: new Date().toISOString() }));
    await manager(ready);
    expect(existsSync(`${ready}.envoy-prestop`)).toBe(false);
    expect((await spawn(hookArgs(envoy, ready, ['--envoy-prestop-wait', '300ms'])).result).code).toBe(0);
    expect(envoy.calls).toHaveLength(0);
  });

  it("counts Envoy's hook only while it is held: not after an Envoy liveness restart has come and gone", async () => {
    const envoy = await realEnvoy();
    const ready = readyFile();
    const { port } = await manager(ready, ['--drain-start-timeout', '400ms'], { ENVOY_SHUTDOWN_HOOK_TOKEN: TOKEN });
    // Envoy's liveness restart runs its preStop: held, then released by the watchdog (no drain ran).
    const held = request({ port }, '/shutdown/ready', { headers: { 'X-Envoy-Shutdown-Token': TOKEN } });
    await waitFor('the envoy-prestop record written', () => existsSync(`${ready}.envoy-prestop`));
    expect((await held).status).toBe(500);
    await waitFor('the envoy-prestop record removed', () => !existsSync(`${ready}.envoy-prestop`));
    // Seconds later the sidecar is restarted by its own liveness probe: its hook must not drain.
    const result = await spawn(hookArgs(envoy, ready, ['--envoy-prestop-wait', '300ms'])).result;
    expect(result.code).toBe(0);
    expect(envoy.calls).toHaveLength(0);
  });

  it('without a configured token, any /shutdown/ready counts (freshness alone protects)', async () => {
    const envoy = await realEnvoy();
    const ready = readyFile();
    const { port } = await manager(ready);
    const hook = request({ port }, '/shutdown/ready');
    const result = await spawn(hookArgs(envoy, ready)).result;
    expect(result.code).toBe(0);
    expect(envoy.calls.length).toBeGreaterThan(2);
    expect((await hook).status).toBe(200);
  });

  it('a manual run (no flag) drains at once, as before', async () => {
    const envoy = await realEnvoy();
    const ready = readyFile();
    const result = await spawn(hookArgs(envoy, ready).filter((a) => a !== '--require-envoy-prestop')).result;
    expect(result.code).toBe(0);
    expect(envoy.calls.length).toBeGreaterThan(2);
  });
});

describe('no drain, no hostage', () => {
  it('releases Envoy after --drain-start-timeout when no drain started, not at the ready timeout', async () => {
    const ready = readyFile();
    const { cli, port } = await manager(ready, ['--drain-start-timeout', '600ms', '--ready-timeout', '60s']);
    const started = Date.now();
    const answer = await request({ port }, '/shutdown/ready');
    expect(answer.status).toBe(500);
    expect(answer.body).toMatch(/no drain started/);
    expect(answer.at - started).toBeGreaterThanOrEqual(550);
    await cli.waitForLog((l) => l.level === 'error' && /no drain is running and no ready file appeared/.test(l.msg));
  });

  it('keeps waiting while a drain runs, and releases when it ends', async () => {
    const envoy = await realEnvoy();
    const ready = readyFile();
    const { port } = await manager(ready, ['--drain-start-timeout', '300ms']);
    // The drain runs first (spawning it may itself take longer than 300 ms on a busy machine).
    const drain = spawn(['shutdown', '--admin-address', envoy.adminAddress, '--ready-file', ready, '--min-drain-duration', '1500ms', '--drain-timeout', '5s']);
    await drain.waitForLog((l) => l.msg === 'graceful drain started');
    const askedAt = Date.now();
    const answer = await request({ port }, '/shutdown/ready');
    expect(answer.status).toBe(200);
    expect(answer.at - askedAt).toBeGreaterThan(300); // held past --drain-start-timeout: a drain was running
    expect((await drain.result).code).toBe(0);
    expect(JSON.parse(answer.body)).toMatchObject({ result: 'drained' });
  });

  it('releases when the drain process died mid-drain, and says so rather than "no drain started"', async () => {
    const envoy = await realEnvoy();
    const ready = readyFile();
    const { cli, port } = await manager(ready, ['--drain-start-timeout', '300ms']);
    const drain = spawn(['shutdown', '--admin-address', envoy.adminAddress, '--ready-file', ready, '--min-drain-duration', '30s', '--drain-timeout', '60s']);
    await drain.waitForLog((l) => l.msg === 'graceful drain started');
    const waiting = request({ port }, '/shutdown/ready');
    await cli.waitForLog((l) => l.msg === 'waiting for the drain to finish');
    drain.child.kill('SIGKILL');
    const answer = await waiting;
    expect(answer.status).toBe(500);
    expect(answer.body).toBe(`the drain process (pid ${drain.child.pid}) ended without finishing (process gone): released undrained\n`);
    const logged = await cli.waitForLog(
      (l) => l.level === 'error' && l.msg.startsWith('a drain started, but its process ended without writing the ready file'),
    );
    expect(logged).toMatchObject({ kind: 'abandoned', pid: drain.child.pid, why: 'process gone' });
  });

  it('is off with --drain-start-timeout 0', async () => {
    const ready = readyFile();
    const { port } = await manager(ready, ['--drain-start-timeout', '0s', '--ready-timeout', '1200ms']);
    const answer = await request({ port }, '/shutdown/ready');
    expect(answer.body).toMatch(/ready file did not appear within 1\.2s/);
  });
});

describe('the native-sidecar drain endpoint', () => {
  it('does not exist unless enabled', async () => {
    const { port } = await manager(readyFile(), [], { ENVOY_SHUTDOWN_HOOK_TOKEN: TOKEN });
    expect((await request({ port }, '/shutdown/drain', { headers: { 'X-Envoy-Shutdown-Token': TOKEN } })).status).toBe(404);
  });

  it('refuses to start without a token', async () => {
    const result = await spawn(['shutdown-manager', '--port', '0', '--ready-file', readyFile(), '--drain-endpoint']).result;
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--drain-endpoint needs ENVOY_SHUTDOWN_HOOK_TOKEN/);
  });

  it('refuses a short token', async () => {
    const result = await spawn(['shutdown-manager', '--port', '0', '--ready-file', readyFile()], { ENVOY_SHUTDOWN_HOOK_TOKEN: 'short' }).result;
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/ENVOY_SHUTDOWN_HOOK_TOKEN: the hook token must be at least 16 characters/);
  });

  it('refuses and logs a drain attempt without the token, touching nothing; never logs the token', async () => {
    const envoy = await realEnvoy();
    const ready = readyFile();
    const { cli, port } = await manager(ready, ['--drain-endpoint'], { ENVOY_SHUTDOWN_HOOK_TOKEN: TOKEN, ENVOY_SHUTDOWN_ADMIN_ADDRESS: envoy.adminAddress });
    const answers = await Promise.all([
      request({ port }, '/shutdown/drain'),
      request({ port }, '/shutdown/drain', { headers: { 'X-Envoy-Shutdown-Token': `${TOKEN}x` } }),
      request({ port }, '/shutdown/drain', { method: 'POST', headers: { 'X-Envoy-Shutdown-Token': TOKEN } }),
    ]);
    expect(answers.map((a) => a.status)).toEqual([403, 403, 405]);
    await cli.waitForLog((l) => l.msg === 'drain request refused: it does not carry the hook token');
    expect(envoy.calls).toHaveLength(0);
    cli.child.kill('SIGTERM');
    const result = await cli.result;
    expect(result.stdout).not.toContain(TOKEN);
  });

  it("runs the drain for the pod's own hook and answers when it ends; concurrent calls join it, a later one drains again", async () => {
    const envoy = await realEnvoy();
    const ready = readyFile();
    const { cli, port } = await manager(ready, ['--drain-endpoint'], {
      ENVOY_SHUTDOWN_HOOK_TOKEN: TOKEN,
      ENVOY_SHUTDOWN_ADMIN_ADDRESS: envoy.adminAddress,
      ENVOY_SHUTDOWN_MIN_DRAIN_DURATION: '400ms',
      ENVOY_SHUTDOWN_DRAIN_TIMEOUT: '5s',
      ENVOY_SHUTDOWN_CHECK_INTERVAL: '100ms',
      ENVOY_SHUTDOWN_CONNECTIONS: 'listeners',
    });
    const headers = { 'X-Envoy-Shutdown-Token': TOKEN };
    const [first, second] = await Promise.all([request({ port }, '/shutdown/drain', { headers }), request({ port }, '/shutdown/drain', { headers })]);
    expect(first.status).toBe(200);
    expect(JSON.parse(first.body)).toMatchObject({ result: 'drained', exitCode: 0 });
    expect(second.body).toBe(first.body);
    expect(envoy.calls.filter((c) => c.path === '/drain_listeners')).toHaveLength(1);
    expect(envoy.calls[0]?.path).toBe('/healthcheck/fail');
    expect(JSON.parse(readFileSync(ready, 'utf8'))).toMatchObject({ result: 'drained' });
    await cli.waitForLog((l) => l.msg === 'shutdown finished' && l.component === 'shutdown');
    // Envoy's hook ran before a liveness restart of Envoy; the pod's real termination comes later.
    const later = await request({ port }, '/shutdown/drain', { headers });
    expect(later.status).toBe(200);
    expect(JSON.parse(later.body).finishedAt).not.toBe(JSON.parse(first.body).finishedAt);
    expect(envoy.calls.filter((c) => c.path === '/drain_listeners')).toHaveLength(2);
  });

  it('exits 2 at start when the drain configuration in the environment is bad', async () => {
    const result = await spawn(['shutdown-manager', '--port', '0', '--ready-file', readyFile(), '--drain-endpoint'], {
      ENVOY_SHUTDOWN_HOOK_TOKEN: TOKEN,
      ENVOY_SHUTDOWN_CHECK_INTERVAL: '0s',
    }).result;
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/ENVOY_SHUTDOWN_CHECK_INTERVAL: duration "0s" must be greater than 0/);
  });
});
