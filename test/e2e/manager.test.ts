// The shutdown-manager process, spawned from the built binary.
import { existsSync, renameSync, writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanEnv, type RunningCli, startCli, tempDir } from '../support/cli.js';
import { request, tcpStream } from '../support/protocols/clients.js';
import { startDrainTarget } from '../support/real-envoy/drain-target.js';

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Manager {
  readonly cli: RunningCli;
  readonly port: number;
  readonly readyFile: string;
  /** Writes the ready file the way `shutdown` does: atomically, with a report. */
  writeReady(result?: string): void;
}

async function startManager(args: string[] = [], env: Record<string, string> = {}): Promise<Manager> {
  const dir = tempDir();
  const readyFile = join(dir.path, 'ready');
  const cli = startCli(['shutdown-manager', '--port', '0', '--ready-file', readyFile, ...args], cleanEnv(env));
  cleanups.push(dir.cleanup, () => {
    cli.child.kill('SIGKILL');
    return cli.result;
  });
  const listening = await cli.waitForLog((line) => line.msg === 'shutdown manager listening');
  return {
    cli,
    port: listening.port as number,
    readyFile,
    writeReady(result = 'drained') {
      writeFileSync(`${readyFile}.tmp`, JSON.stringify({ result, connections: 0, elapsedMs: 1234, exitCode: 0, finishedAt: new Date().toISOString() }));
      renameSync(`${readyFile}.tmp`, readyFile);
    },
  };
}

/** Starts a request whose headers never end; resolves with what the server sent before closing. */
async function cutForSlowHeaders(port: number): Promise<string> {
  const socket = connect(port, '127.0.0.1');
  socket.write('GET /shutdown/ready HTTP/1.1\r\nHost: x\r\n'); // headers never finished
  let received = '';
  socket.on('data', (chunk) => (received += chunk.toString()));
  await new Promise((resolve) => socket.on('close', resolve));
  return received;
}

/** Resolves once the manager logged that `count` waiters are registered. */
function waitersRegistered(manager: Manager, count: number): Promise<unknown> {
  return manager.cli.waitForLog((line) => line.msg === 'waiting for the drain to finish' && line.waiting === count);
}

describe('shutdown-manager endpoints', () => {
  it('answers /healthz, 404 for other paths and 405 for other methods', async () => {
    const { port } = await startManager();
    const answers = await Promise.all([
      request({ port }, '/healthz'),
      request({ port }, '/healthz', { method: 'HEAD' }),
      request({ port }, '/healthz', { method: 'POST' }),
      request({ port }, '/shutdown/ready', { method: 'POST' }),
      request({ port }, '/shutdown/ready', { method: 'DELETE' }),
      request({ port }, '/shutdown'),
      request({ port }, '/shutdown/ready/'),
      request({ port }, '/'),
      request({ port }, '/healthcheck/fail', { method: 'POST' }),
    ]);
    expect(answers.map((a) => a.status)).toEqual([200, 200, 405, 405, 405, 404, 404, 404, 404]);
    expect(answers[0]?.body).toBe('ok\n');
    expect(answers[2]?.headers.allow).toBe('GET, HEAD');
    expect(answers[3]?.headers.allow).toBe('GET');
  });

  it('answers an absolute-form request target like the origin form', async () => {
    const manager = await startManager();
    const raw = (target: string): Promise<string> =>
      new Promise((resolve, reject) => {
        const socket = connect(manager.port, '127.0.0.1');
        let received = '';
        socket.on('data', (chunk) => (received += chunk.toString()));
        socket.on('error', reject);
        socket.on('end', () => resolve(received));
        socket.write(`GET ${target} HTTP/1.1\r\nHost: pod\r\nConnection: close\r\n\r\n`);
      });
    expect(await raw('http://pod:19002/healthz')).toMatch(/^HTTP\/1\.1 200/);
    expect(await raw('http://pod/nowhere')).toMatch(/^HTTP\/1\.1 404/);
    const waiting = raw('http://pod:19002/shutdown/ready?x=1');
    await waitersRegistered(manager, 1);
    manager.writeReady();
    expect(await waiting).toMatch(/^HTTP\/1\.1 200[\s\S]*"result":"drained"/);
  });

  it('holds /shutdown/ready until the ready file appears, then answers 200 with the report', async () => {
    const manager = await startManager();
    const waiting = request({ port: manager.port }, '/shutdown/ready?attempt=1');
    await waitersRegistered(manager, 1);
    let answered = false;
    void waiting.then(() => (answered = true));
    // A second waiter registered later: the first one was held all that time.
    const second = request({ port: manager.port }, '/shutdown/ready');
    await waitersRegistered(manager, 2);
    expect(answered).toBe(false);
    manager.writeReady('timeout');
    expect((await second).status).toBe(200);
    const answer = await waiting;
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toMatchObject({ result: 'timeout', connections: 0, elapsedMs: 1234 });
    const released = await manager.cli.waitForLog((line) => line.msg === 'drain finished: releasing envoy');
    expect(released).toMatchObject({ result: 'timeout', connections: 0, drainElapsedMs: 1234 });
  });

  it('releases every waiter at once, in one log line, and later callers immediately', async () => {
    const manager = await startManager();
    const waiting = Array.from({ length: 50 }, () => request({ port: manager.port }, '/shutdown/ready'));
    await waitersRegistered(manager, 50);
    manager.writeReady();
    const answers = await Promise.all(waiting);
    expect(answers.every((a) => a.status === 200)).toBe(true);
    expect(new Set(answers.map((a) => a.body)).size).toBe(1);
    await manager.cli.waitForLog((line) => line.msg === 'drain finished: releasing envoy');
    expect(manager.cli.logs.filter((line) => line.msg === 'drain finished: releasing envoy')).toMatchObject([{ waiters: 50, result: 'drained' }]);
    expect((await request({ port: manager.port }, '/shutdown/ready')).status).toBe(200);
  });

  it('releases on a plain file too (touch by hand), reporting an unknown result', async () => {
    const manager = await startManager();
    const waiting = request({ port: manager.port }, '/shutdown/ready');
    await waitersRegistered(manager, 1);
    writeFileSync(manager.readyFile, '');
    const answer = await waiting;
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toEqual({ result: 'unknown' });
  });

  it('answers 500 at --ready-timeout', async () => {
    const manager = await startManager(['--ready-timeout', '700ms']);
    const started = Date.now();
    const answer = await request({ port: manager.port }, '/shutdown/ready');
    expect(answer.status).toBe(500);
    expect(answer.body).toMatch(/ready file did not appear within 700ms/);
    expect(answer.at - started).toBeGreaterThanOrEqual(650);
    await manager.cli.waitForLog((line) => line.level === 'error' && /before --ready-timeout/.test(line.msg));
  });

  it('is not cut short by its request timeout while waiting', async () => {
    const manager = await startManager(['--request-timeout', '200ms', '--ready-timeout', '5s']);
    let answered = false;
    const waiting = request({ port: manager.port }, '/shutdown/ready').finally(() => (answered = true));
    await waitersRegistered(manager, 1);
    // A client that never finishes its headers, opened after the waiter: once it is cut, the
    // server's timeout check has run with the waiter older than --request-timeout.
    expect(await cutForSlowHeaders(manager.port)).toMatch(/^HTTP\/1\.1 408/);
    expect(answered).toBe(false);
    manager.writeReady();
    expect((await waiting).status).toBe(200);
  });

  it('cuts a client that does not finish its request headers within --request-timeout', async () => {
    const manager = await startManager(['--request-timeout', '300ms']);
    expect(await cutForSlowHeaders(manager.port)).toMatch(/^HTTP\/1\.1 408/);
  });

  it('caps concurrent waiters with 503 and forgets a client that goes away', async () => {
    const manager = await startManager(['--max-waiters', '2']);
    const leaving = new AbortController();
    const first = request({ port: manager.port }, '/shutdown/ready', { signal: leaving.signal }).catch(() => 'aborted');
    const second = request({ port: manager.port }, '/shutdown/ready');
    await waitersRegistered(manager, 2);
    const third = await request({ port: manager.port }, '/shutdown/ready');
    expect(third.status).toBe(503);
    expect(third.body).toMatch(/too many waiters \(2\)/);

    leaving.abort();
    expect(await first).toBe('aborted');
    await manager.cli.waitForLog((line) => line.msg === 'waiter went away');
    const fourth = request({ port: manager.port }, '/shutdown/ready');
    await waitersRegistered(manager, 2); // the place the departed client held is free again
    manager.writeReady();
    expect((await second).status).toBe(200);
    expect((await fourth).status).toBe(200);
  });
});

describe('shutdown-manager start-up', () => {
  it('removes a ready file left by an earlier run, so it cannot release Envoy early', async () => {
    const dir = tempDir();
    cleanups.push(dir.cleanup);
    const readyFile = join(dir.path, 'ready');
    writeFileSync(readyFile, '{"result":"drained","elapsedMs":1}');
    const cli = startCli(['shutdown-manager', '--port', '0', '--ready-file', readyFile]);
    cleanups.push(() => {
      cli.child.kill('SIGKILL');
      return cli.result;
    });
    const listening = await cli.waitForLog((line) => line.msg === 'shutdown manager listening');
    await cli.waitForLog((line) => line.msg === 'removed a ready file left by an earlier run');
    expect(existsSync(readyFile)).toBe(false);
    const controller = new AbortController();
    let answered = false;
    const waiting = request({ port: listening.port as number }, '/shutdown/ready', { signal: controller.signal })
      .then(() => (answered = true))
      .catch(() => 'still waiting');
    await cli.waitForLog((line) => line.msg === 'waiting for the drain to finish');
    // A later waiter, and a later look at the directory: the first is still held.
    const later = request({ port: listening.port as number }, '/shutdown/ready', { signal: controller.signal }).catch(() => 'still waiting');
    await cli.waitForLog((line) => line.msg === 'waiting for the drain to finish' && line.waiting === 2);
    expect(answered).toBe(false);
    controller.abort();
    expect(await waiting).toBe('still waiting');
    expect(await later).toBe('still waiting');
  });

  it('exits 2 with one line when the port is in use, leaving the ready file alone', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, resolve));
    cleanups.push(() => new Promise((resolve) => blocker.close(resolve)));
    const port = (blocker.address() as { port: number }).port;
    const dir = tempDir();
    cleanups.push(dir.cleanup);
    const readyFile = join(dir.path, 'ready');
    writeFileSync(readyFile, 'written by the manager that owns the port');
    const result = await startCli(['shutdown-manager', '--port', String(port), '--ready-file', readyFile]).result;
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(new RegExp(`^error: cannot listen on all interfaces port ${port}: the port is already in use\\n$`));
    expect(existsSync(readyFile)).toBe(true);
  });

  it.each([
    [['--port', 'http'], /--port <port>' argument 'http' is invalid/],
    [['--port', '70000'], /outside 0-65535/],
    [['--ready-timeout', '0s'], /must be greater than 0/],
    [['--ready-timeout', '10'], /with a unit/],
    [['--host', 'example.com'], /not an IP address/],
    [['--max-waiters', '0'], /at least 1/],
    [['--ready-file', '/nonexistent-dir/ready'], /ready file directory \/nonexistent-dir does not exist/],
    [['--ready-file', 'relative'], /must be an absolute path/],
    [['--bogus'], /unknown option '--bogus'/],
  ])('exits 2 with one line for %j', async (args, message) => {
    const result = await startCli(['shutdown-manager', '--port', '0', ...args]).result;
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
    expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(result.stdout).toBe('');
  });

  it('exits 2 when its ready timeout does not exceed the drain timeout set for shutdown', async () => {
    const result = await startCli(['shutdown-manager', '--port', '0', '--ready-timeout', '30s'], cleanEnv({ ENVOY_SHUTDOWN_DRAIN_TIMEOUT: '60s' })).result;
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--ready-timeout \(30s\) must be longer than the drain timeout ENVOY_SHUTDOWN_DRAIN_TIMEOUT=60s/);
  });

  it('exits 2 when the ready-file directory is not writable', async () => {
    const dir = tempDir();
    cleanups.push(dir.cleanup);
    // A file where the directory should be: unwritable for root too.
    writeFileSync(join(dir.path, 'not-a-dir'), '');
    const result = await startCli(['shutdown-manager', '--port', '0', '--ready-file', join(dir.path, 'not-a-dir', 'ready')]).result;
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/does not exist/);
  });

  it('reads its options from environment variables, flags winning', async () => {
    const dir = tempDir();
    cleanups.push(dir.cleanup);
    const cli = startCli(
      ['shutdown-manager', '--max-waiters', '7'],
      cleanEnv({
        ENVOY_SHUTDOWN_PORT: '0',
        ENVOY_SHUTDOWN_READY_FILE: join(dir.path, 'ready'),
        ENVOY_SHUTDOWN_READY_TIMEOUT: '90s',
        ENVOY_SHUTDOWN_MAX_WAITERS: '3',
        ENVOY_SHUTDOWN_LOG_FORMAT: 'json',
      }),
    );
    cleanups.push(() => {
      cli.child.kill('SIGKILL');
      return cli.result;
    });
    const listening = await cli.waitForLog((line) => line.msg === 'shutdown manager listening');
    expect(listening).toMatchObject({ readyFile: join(dir.path, 'ready'), readyTimeout: '1m30s', maxWaiters: 7 });
  });
});

describe('shutdown-manager signals', () => {
  it('exits 0 on SIGTERM with no waiter', async () => {
    const manager = await startManager();
    manager.cli.child.kill('SIGTERM');
    const result = await manager.cli.result;
    expect(result.code).toBe(0);
    expect(result.logs.map((l) => l.msg)).toContain('shutdown manager stopped');
  });

  it('on SIGTERM with waiters and no ready file answers every waiter 500 at once, says why, then exits 0', async () => {
    // kubelet sends the sidecar SIGTERM only after its own preStop hook (the drain) returned: no
    // ready file by then means none is coming.
    const manager = await startManager(['--ready-timeout', '10m', '--drain-start-timeout', '0s']);
    const waiting = Array.from({ length: 3 }, () => request({ port: manager.port }, '/shutdown/ready'));
    await waitersRegistered(manager, 3);
    manager.cli.child.kill('SIGTERM');
    const answers = await Promise.all(waiting);
    expect(answers.map((a) => a.status)).toEqual([500, 500, 500]);
    expect(answers[0]?.body).toMatch(/manager stopping before the ready file appeared/);
    const result = await manager.cli.result;
    expect(result.code).toBe(0);
    expect(result.logs.find((l) => l.level === 'error' && /stopped before the ready file appeared/.test(l.msg))).toMatchObject({
      signal: 'SIGTERM',
      waiters: 3,
    });
    expect(result.logs.at(-1)).toMatchObject({ msg: 'shutdown manager stopped', exitCode: 0 });
  });

  it('exits at once on a second signal, even while a drain it runs is still going', async () => {
    const envoy = await startDrainTarget();
    cleanups.push(() => envoy.close());
    // A connection that never sends a request: Envoy's drain closes it only when Envoy exits.
    const held = await tcpStream(envoy.listenerPort('ingress'));
    cleanups.push(() => held.close());
    const token = 'a-token-of-sixteen-chars';
    const manager = await startManager(['--drain-endpoint'], {
      ENVOY_SHUTDOWN_HOOK_TOKEN: token,
      ENVOY_SHUTDOWN_ADMIN_ADDRESS: envoy.adminAddress,
      ENVOY_SHUTDOWN_DRAIN_TIMEOUT: '60s',
      ENVOY_SHUTDOWN_CONNECTIONS: 'listeners',
    });
    const draining = request({ port: manager.port }, '/shutdown/drain', { headers: { 'X-Envoy-Shutdown-Token': token } }).catch(
      (error: Error) => error.message,
    );
    await manager.cli.waitForLog((line) => line.msg === 'graceful drain started');
    manager.cli.child.kill('SIGTERM');
    await manager.cli.waitForLog((line) => line.msg.startsWith('stopping'));
    expect(manager.cli.child.exitCode).toBeNull(); // the drain is still answered
    manager.cli.child.kill('SIGTERM');
    const result = await manager.cli.result;
    expect(result.code).toBe(143);
    expect(await draining).toMatch(/socket hang up|ECONNRESET/);
  });
});
