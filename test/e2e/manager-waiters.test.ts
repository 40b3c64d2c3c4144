// The manager under many waiters and with drain markers it cannot trust: per-waiter events are
// logged in summary, their memory is collected once they left, and a marker whose pid is not the
// drain that wrote it never holds Envoy.
import { spawn as spawnChild } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanEnv, type LogLine, type RunningCli, startCli, tempDir } from '../support/cli.js';
import { request } from '../support/protocols/clients.js';

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function readyFile(): string {
  const dir = tempDir();
  cleanups.push(dir.cleanup);
  return join(dir.path, 'ready');
}

async function manager(ready: string, args: string[] = []): Promise<{ cli: RunningCli; port: number }> {
  const cli = startCli(['shutdown-manager', '--port', '0', '--host', '127.0.0.1', '--ready-file', ready, ...args], cleanEnv());
  cleanups.push(() => {
    cli.child.kill('SIGKILL');
    return cli.result;
  });
  const line = await cli.waitForLog((l) => l.msg === 'shutdown manager listening');
  return { cli, port: line.port as number };
}

/** How many events the lines with `msg` stand for: a line logged at once is one, a summary line the `repeated` it counts. */
function eventsOf(logs: readonly LogLine[], msg: string): number {
  return logs.filter((l) => l.msg === msg).reduce((sum, l) => sum + ((l.repeated as number | undefined) ?? 1), 0);
}

function marker(ready: string, pid: number, extra: Record<string, unknown> = {}): void {
  const state = {
    pid,
    startedAt: new Date().toISOString(),
    startedBy: 'hook',
    phase: 'draining',
    minDrainMs: 1_000,
    drainTimeoutMs: 60_000,
    quietPeriodMs: 0,
    ...extra,
  };
  writeFileSync(`${ready}.draining`, `${JSON.stringify(state)}\n`);
}

describe("drain markers the manager cannot verify don't hold Envoy", () => {
  it.each([
    ['without a recorded start time', {}],
    ['with a start time that is not its process', { pidStartTime: '1' }],
  ])('a marker naming an unrelated live process %s: released by the watchdog, saying why', async (_what, extra) => {
    // Any live process that is not a drain: pid reuse after a container restart looks like this.
    const unrelated = spawnChild(process.execPath, ['-e', 'setTimeout(() => {}, 60_000)'], { stdio: 'ignore' });
    cleanups.push(() => unrelated.kill('SIGKILL'));
    const ready = readyFile();
    const { cli, port } = await manager(ready, ['--drain-start-timeout', '300ms', '--ready-timeout', '30s']);
    marker(ready, unrelated.pid ?? 0, extra);
    const answer = await request({ port }, '/shutdown/ready');
    expect(answer.status).toBe(500);
    expect(answer.body).toBe(`the drain process (pid ${unrelated.pid}) ended without finishing (pid reused or unverifiable): released undrained\n`);
    expect(await cli.waitForLog((l) => l.level === 'error' && l.kind === 'abandoned')).toMatchObject({ pid: unrelated.pid, why: 'pid reused or unverifiable' });
  });
});

describe('waiters are logged in summary', () => {
  it('200 waiters that come and go: a few lines, each event counted, nothing left waiting, memory collected once they left', async () => {
    const ready = readyFile();
    const { cli, port } = await manager(ready, ['--max-waiters', '1000']);
    const sockets: Socket[] = [];
    for (let i = 0; i < 200; i += 1) {
      const socket = connect(port, '127.0.0.1');
      socket.on('error', () => undefined);
      socket.write('GET /shutdown/ready HTTP/1.1\r\nHost: manager\r\n\r\n');
      sockets.push(socket);
    }
    cleanups.push(() => {
      for (const s of sockets) s.destroy();
    });
    const arrived = 'waiting for the drain to finish';
    await cli.waitForLog(() => eventsOf(cli.logs, arrived) === 200);
    for (const socket of sockets) socket.destroy();
    const left = 'waiter went away';
    await cli.waitForLog(() => eventsOf(cli.logs, left) === 200);
    const perWaiter = cli.logs.filter((l) => l.msg === arrived || l.msg === left);
    expect(perWaiter.length).toBeLessThanOrEqual(12); // 400 before: two per waiter
    expect(perWaiter.some((l) => (l.repeated as number) > 0)).toBe(true);
    // Once they are all gone and none left for a while, one collection gives their memory back.
    expect(await cli.waitForLog((l) => l.msg === 'memory collected after a crowd of waiters')).toMatchObject({ waiters: 200 });
    // Every waiter left: a new one still waits, and is released by the file as ever.
    const next = request({ port }, '/shutdown/ready');
    await cli.waitForLog(() => eventsOf(cli.logs, arrived) === 201);
    writeFileSync(ready, `${JSON.stringify({ result: 'drained', connections: 0, elapsedMs: 1, exitCode: 0, finishedAt: 'now' })}\n`);
    expect((await next).status).toBe(200);
  });
});
