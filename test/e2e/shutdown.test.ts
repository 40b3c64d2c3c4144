// `shutdown`, run as the built binary against real Envoy started from the chart's bootstrap (behind
// a recording admin tap, which also injects the admin faults real Envoy cannot be made to show).
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FAST_READ_INTERVAL_MS } from '../../src/drain/schedule.js';
import { cleanEnv, type RunResult, startCli, tempDir } from '../support/cli.js';
import { pollUntil } from '../support/poll.js';
import { idleHttp1 } from '../support/protocols/clients.js';
import { renderedPod } from '../support/real-envoy/chart-envoy.js';
import { type DrainTarget, realEnvoyAndReadyFile } from '../support/real-envoy/drain-target.js';
import { expectedStatsReads, isStatsRead } from '../support/stats-reads.js';

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The chart's values with one more listener, `stats-19001`: a user's listener whose name starts like the chart's ignored `stats`. */
async function withLookAlikeListener(): Promise<Record<string, unknown>> {
  const [ingress] = (await renderedPod()).bootstrap.static_resources?.listeners?.filter((l) => l.name === 'ingress') ?? [];
  const lookAlike = JSON.parse(JSON.stringify(ingress).replaceAll('"ingress"', '"stats-19001"')) as unknown;
  return { listeners: [ingress, lookAlike] };
}

async function standIn(options: { lookAlike?: boolean; statsFlushInterval?: string } = {}): Promise<DrainTarget> {
  const render = options.lookAlike === true ? { render: { values: await withLookAlikeListener() } } : {};
  const flush = options.statsFlushInterval === undefined ? {} : { statsFlushInterval: options.statsFlushInterval };
  return (await realEnvoyAndReadyFile((cleanup) => cleanups.push(cleanup), { ...render, ...flush })).envoy;
}

function readyPath(): string {
  const dir = tempDir();
  cleanups.push(dir.cleanup);
  return join(dir.path, 'ready');
}

/** Fast defaults so each drain takes about a second; every test overrides what it is about. */
function shutdownArgs(adminAddress: string, readyFile: string, extra: string[] = []): string[] {
  return [
    'shutdown',
    '--admin-address',
    adminAddress,
    '--ready-file',
    readyFile,
    '--min-drain-duration',
    '300ms',
    '--drain-timeout',
    '5s',
    '--check-interval',
    '100ms',
    ...extra,
  ];
}

function run(args: string[], env: Record<string, string> = {}): ReturnType<typeof startCli> {
  const cli = startCli(args, cleanEnv(env));
  cleanups.push(() => {
    cli.child.kill('SIGKILL');
    return cli.result.catch(() => undefined);
  });
  return cli;
}

/** Resolves once the tap has seen a call matching `predicate` (answered, when the predicate asks for a status). */
async function waitForCall(envoy: DrainTarget, predicate: (call: DrainTarget['calls'][number]) => boolean, timeoutMs = 10_000): Promise<void> {
  await pollUntil('such an admin call', () => envoy.calls.some(predicate), { timeoutMs, everyMs: 10, lastSeen: () => JSON.stringify(envoy.calls.slice(-5)) });
}

function report(path: string): Record<string, unknown> {
  return JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
}

function statsReads(envoy: DrainTarget): number {
  return envoy.calls.filter(isStatsRead).length;
}

function messages(result: RunResult): string[] {
  return result.logs.map((line) => line.msg);
}

describe('shutdown drain sequence', () => {
  it('fails the health check, then starts a graceful drain with skip_exit, then reads the count', async () => {
    const envoy = await standIn();
    const ready = readyPath();
    const result = await run(shutdownArgs(envoy.adminAddress, ready)).result;
    expect(result.code).toBe(0);
    const calls = envoy.calls.map((c) => `${c.method} ${c.path}${c.query === '' ? '' : `?${c.query}`}`);
    expect(calls[0]).toBe('POST /healthcheck/fail');
    expect(calls[1]).toBe('POST /drain_listeners?graceful&skip_exit');
    expect(calls.slice(2)).toEqual(expectedStatsReads({ server: true }, calls.slice(2)));
    expect(calls.length).toBeGreaterThan(2);
    expect(envoy.calls.every((c) => c.status === 200)).toBe(true);
    expect(await envoy.state()).toBe('DRAINING');
    expect(report(ready)).toMatchObject({ result: 'drained', connections: 0, exitCode: 0 });
    expect(messages(result)).toEqual(
      expect.arrayContaining([
        'health check failed: Envoy reports itself unhealthy',
        'graceful drain started',
        'minimum drain period reached',
        'drain completed',
        'shutdown finished',
      ]),
    );
  });

  it('never finishes before the minimum drain, even with no connections', async () => {
    const envoy = await standIn();
    const ready = readyPath();
    const cli = run(shutdownArgs(envoy.adminAddress, ready, ['--min-drain-duration', '1500ms']));
    const result = await cli.result;
    expect(result.code).toBe(0);
    // The drain's clock starts once Envoy answered the health check failure: the minimum counts
    // from the moment Envoy was asked, never from an earlier start of the binary.
    expect(envoy.calls[0]?.path).toBe('/healthcheck/fail');
    expect(result.exitedAt - (envoy.calls[0]?.time ?? Infinity)).toBeGreaterThanOrEqual(1_500);
    const finished = result.logs.find((l) => l.msg === 'shutdown finished');
    expect(finished?.elapsedMs).toBeGreaterThanOrEqual(1_500);
  });

  it('finishes at the first read after the count reaches the threshold', async () => {
    const envoy = await standIn();
    const ready = readyPath();
    const held = await idleHttp1(envoy.listenerPort('ingress'));
    const cli = run(
      shutdownArgs(envoy.adminAddress, ready, [
        '--connections',
        'listeners',
        '--check-interval',
        '1s',
        '--min-drain-duration',
        '200ms',
        '--drain-timeout',
        '30s',
      ]),
    );
    // Past the minimum drain, the count read 1, and again at the next read: still draining.
    await cli.waitForLog((l) => l.msg === 'minimum drain period reached' && l.connections === 1);
    const readsBefore = statsReads(envoy);
    await waitForCall(envoy, () => statsReads(envoy) > readsBefore + 1);
    expect(cli.child.exitCode).toBeNull(); // one connection is still open
    await held.close();
    await envoy.waitForStat('listener.ingress.downstream_cx_active', (value) => value === 0);
    const gaugeZeroAt = statsReads(envoy);
    const result = await cli.result;
    expect(result.code).toBe(0);
    // At most the read in flight when the gauge reached 0 and the one that saw it come after.
    expect(statsReads(envoy) - gaugeZeroAt).toBeLessThanOrEqual(2);
    expect(report(ready)).toMatchObject({ result: 'drained', connections: 0 });
  });

  // With `listeners`, the kernel's TCP socket count (the pod shares one network namespace) says when
  // a connection closed; the admin read that follows decides. Here the admin reads' own cadence is
  // slow (a 20 s check interval: a safety net every 5 s with one left), so each read after a close
  // comes from the hint, never from the cadence.
  it('reads as soon as the socket count shows a connection closed, and only that read decides', async () => {
    const envoy = await standIn();
    const ready = readyPath();
    const [first, second] = await Promise.all([idleHttp1(envoy.listenerPort('ingress')), idleHttp1(envoy.listenerPort('ingress'))]);
    const args = ['--connections', 'listeners', '--check-interval', '20s', '--min-drain-duration', '200ms', '--drain-timeout', '60s', '--log-level', 'debug'];
    const cli = run(shutdownArgs(envoy.adminAddress, ready, args));
    await cli.waitForLog((l) => l.msg === 'watching the socket count for a closed connection');
    await first?.close();
    // The hint's read sees one connection left: it does not end the drain.
    await cli.waitForLog((l) => l.msg === 'connections read' && l.connections === 1);
    expect(cli.child.exitCode).toBeNull();
    await second?.close();
    const result = await cli.result;
    expect(result.code).toBe(0);
    expect(report(ready)).toMatchObject({ result: 'drained', connections: 0 });
    const reasons = result.logs.filter((l) => l.msg === 'reading connections').map((l) => l.why);
    expect(reasons.length).toBe(statsReads(envoy));
    // Two reads before the hint watched (the first, and the one at the end of the minimum drain),
    // then one per change in the count: a client's side and Envoy's side of a connection may
    // close apart, and any other socket of this network namespace may add a hint of its own,
    // never a read from the cadence.
    // (The second waits for the reads' share of Envoy instead when the first was slow: a busy node.)
    expect(reasons[0]).toBe('first');
    expect(['may-finish', 'share']).toContain(reasons[1]);
    expect(reasons.slice(2).every((why) => why === 'socket-closed')).toBe(true);
    expect(reasons.length).toBeGreaterThanOrEqual(4);
  });

  it('without the socket count, reads at the regular end-game cadence and still finishes', async () => {
    const envoy = await standIn();
    const ready = readyPath();
    const held = await idleHttp1(envoy.listenerPort('ingress'));
    const args = ['--connections', 'listeners', '--check-interval', '1s', '--min-drain-duration', '200ms', '--drain-timeout', '30s', '--log-level', 'debug'];
    const cli = run(shutdownArgs(envoy.adminAddress, ready, args), { ENVOY_SHUTDOWN_SOCKET_COUNTS_DIR: join(readyPath(), 'no-such-dir') });
    const off = await cli.waitForLog((l) => l.msg === 'socket count unreadable: end-game reads at the regular cadence');
    expect(off.reason).toMatch(/ENOENT/);
    await held.close();
    const result = await cli.result;
    expect(result.code).toBe(0);
    expect(report(ready)).toMatchObject({ result: 'drained', connections: 0 });
    const reasons = result.logs.filter((l) => l.msg === 'reading connections').map((l) => l.why);
    // The first read, then the schedule's own: never one the socket count brought.
    expect(reasons[0]).toBe('first');
    expect(reasons.slice(1).every((why) => ['may-finish', 'end-game', 'share'].includes(String(why)))).toBe(true);
    expect(reasons).toContain('end-game');
    expect(messages(result).filter((msg) => msg === 'socket count unreadable: end-game reads at the regular cadence')).toHaveLength(1);
  });

  it('finishes at --exit-at-connections, not only at zero', async () => {
    const envoy = await standIn();
    const ready = readyPath();
    const a = await idleHttp1(envoy.listenerPort('ingress'));
    const b = await idleHttp1(envoy.listenerPort('ingress'));
    cleanups.push(
      () => a.close(),
      () => b.close(),
    );
    const result = await run(shutdownArgs(envoy.adminAddress, ready, ['--connections', 'listeners', '--exit-at-connections', '2'])).result;
    expect(result.code).toBe(0);
    expect(report(ready)).toMatchObject({ result: 'drained', connections: 2 });
  });

  it('exits 3 at the drain timeout with connections left, and still writes the ready file', async () => {
    const envoy = await standIn();
    const ready = readyPath();
    const idle = await idleHttp1(envoy.listenerPort('ingress')); // an idle keep-alive connection is never drained
    cleanups.push(() => idle.close());
    const result = await run(
      shutdownArgs(envoy.adminAddress, ready, ['--connections', 'listeners', '--drain-timeout', '1200ms', '--min-drain-duration', '200ms']),
    ).result;
    expect(result.code).toBe(3);
    expect(report(ready)).toMatchObject({ result: 'timeout', connections: 1, exitCode: 3 });
    expect(report(ready).elapsedMs).toBeGreaterThanOrEqual(1_200);
    expect(messages(result)).toContain('drain timeout exceeded');
    expect(idle.socket.destroyed).toBe(false); // we never close connections ourselves
  });

  it('with a health check failure delay, drains first and fails the health check after the delay', async () => {
    const envoy = await standIn();
    const ready = readyPath();
    const idle = await idleHttp1(envoy.listenerPort('ingress'));
    const cli = run(
      shutdownArgs(envoy.adminAddress, ready, ['--health-check-failure-delay', '600ms', '--min-drain-duration', '200ms', '--connections', 'listeners']),
    );
    await cli.waitForLog((l) => l.msg === 'health check failed after the configured delay');
    await idle.close();
    const result = await cli.result;
    expect(result.code).toBe(0);
    const drain = envoy.calls.find((c) => c.path === '/drain_listeners');
    const fail = envoy.calls.find((c) => c.path === '/healthcheck/fail');
    if (drain === undefined || fail === undefined) throw new Error('the manager never called /drain_listeners and /healthcheck/fail');
    expect(envoy.calls.indexOf(drain)).toBe(0);
    // The tap's arrival times carry each request's own latency: bound from the spawn, which precedes the drain.
    expect(fail.time - cli.startedAt).toBeGreaterThanOrEqual(600);
  });

  it('skips the delayed health check failure when the drain is over first', async () => {
    const envoy = await standIn();
    const ready = readyPath();
    // Live counts: `total` would wait for Envoy's next stats flush (up to 5 s), past the delay.
    const result = await run(
      shutdownArgs(envoy.adminAddress, ready, ['--connections', 'listeners', '--health-check-failure-delay', '3s', '--min-drain-duration', '200ms']),
    ).result;
    expect(result.code).toBe(0);
    expect(envoy.calls.some((c) => c.path === '/healthcheck/fail')).toBe(false);
    expect(await envoy.state()).toBe('LIVE');
    expect(messages(result)).toContain('drain ended before the health check failure delay: health check left passing');
  });

  it('reads server.total_connections, which moves only at stats flushes', async () => {
    const envoy = await standIn();
    const ready = readyPath();
    const held = await idleHttp1(envoy.listenerPort('ingress'));
    // Envoy recomputes the gauge at its stats flush: every 5 s with the chart's bootstrap.
    await envoy.waitForStat('server.total_connections', (value) => value === 1);
    const cli = run(shutdownArgs(envoy.adminAddress, ready, ['--min-drain-duration', '100ms']));
    await cli.waitForLog((l) => l.msg === 'draining' && l.connections === 1);
    const closedAt = Date.now();
    await held.close();
    const result = await cli.result;
    expect(result.code).toBe(0);
    const finished = result.logs.find((l) => l.msg === 'drain completed');
    expect(finished?.connections).toBe(0);
    // The gauge may lag the close by up to one flush interval; the drain never ends before the close.
    expect(result.exitedAt).toBeGreaterThanOrEqual(closedAt);
  }, 30_000);

  // With `total` the count moves only at a flush: the end game reads at its pace until the flush
  // that shows the close, never faster, and the drain never ends before the close.
  it('with `total`, the end game keeps its pace until the flush that shows the close', async () => {
    const flushMs = 2_000;
    const envoy = await standIn({ statsFlushInterval: `${flushMs / 1_000}s` });
    const ready = readyPath();
    const held = await idleHttp1(envoy.listenerPort('ingress'));
    await envoy.waitForStat('server.total_connections', (value) => value === 1);
    const args = ['--check-interval', '1s', '--min-drain-duration', '100ms', '--drain-timeout', '60s', '--log-level', 'debug'];
    const cli = run(shutdownArgs(envoy.adminAddress, ready, args));
    await cli.waitForLog((l) => l.msg === 'reading connections' && l.why === 'end-game', 30_000);
    expect(cli.child.exitCode).toBeNull(); // the connection still holds the drain
    const readsAtClose = statsReads(envoy);
    const closedAt = Date.now();
    await held.close();
    const result = await cli.result;
    expect(result.code).toBe(0);
    expect(report(ready)).toMatchObject({ result: 'drained', connections: 0 });
    expect(result.exitedAt).toBeGreaterThanOrEqual(closedAt);
    // One flush period at most from the close to the flush that shows it, at one read every 25 ms at most.
    const tookMs = result.exitedAt - closedAt;
    expect(statsReads(envoy) - readsAtClose).toBeLessThanOrEqual(Math.ceil(tookMs / FAST_READ_INTERVAL_MS) + 1);
  }, 60_000);

  it.each([[['--no-ready-file']], [['--ready-file', '']]])('with %j writes no ready file and no drain state', async (flags) => {
    const envoy = await standIn();
    const ready = readyPath();
    const args = shutdownArgs(envoy.adminAddress, ready).filter((a, i, all) => a !== ready && all[i + 1] !== ready);
    const result = await run([...args, ...flags]).result;
    expect(result.code).toBe(0);
    expect(existsSync(ready)).toBe(false);
    expect(readdirSync(dirname(ready))).toEqual([]);
    expect(result.logs.at(-1)).toMatchObject({ msg: 'shutdown finished', result: 'drained', readyFile: 'none' });
  });

  it('removes a stale ready file before draining', async () => {
    const envoy = await standIn();
    const ready = readyPath();
    writeFileSync(ready, JSON.stringify({ result: 'timeout', connections: 3, elapsedMs: 60_000, exitCode: 3, finishedAt: '2026-01-01T00:00:00.000Z' }));
    const cli = run(shutdownArgs(envoy.adminAddress, ready, ['--min-drain-duration', '800ms']));
    await cli.waitForLog((l) => l.msg === 'graceful drain started');
    expect(existsSync(ready)).toBe(false);
    expect((await cli.result).code).toBe(0);
    expect(report(ready).result).toBe('drained');
  });
});

describe('shutdown --connections listeners', () => {
  it('ignores the admin listener, per-worker copies and ignored listeners, by exact name', async () => {
    const envoy = await standIn();
    const ready = readyPath();
    // A scraper's keep-alive connection on the stats listener would hold a `total` drain to its timeout.
    const scraper = await idleHttp1(envoy.listenerPort('stats'));
    cleanups.push(() => scraper.close());
    const result = await run(shutdownArgs(envoy.adminAddress, ready, ['--connections', 'listeners', '--ignore-listener', 'stats'])).result;
    expect(result.code).toBe(0);
    expect(report(ready)).toMatchObject({ result: 'drained', connections: 0 });
    expect(await envoy.stat('listener.stats.downstream_cx_active')).toBe(1); // Envoy still holds it: left out, not gone
    const reads = envoy.calls.filter(isStatsRead).map((c) => `${c.method} ${c.path}?${c.query}`);
    expect(reads).toEqual(expectedStatsReads({}, reads));
  });

  it('counts a listener whose name only starts like an ignored one', async () => {
    const envoy = await standIn({ lookAlike: true });
    const ready = readyPath();
    const held = await idleHttp1(envoy.listenerPort('stats-19001'));
    cleanups.push(() => held.close());
    const result = await run(shutdownArgs(envoy.adminAddress, ready, ['--connections', 'listeners', '--ignore-listener', 'stats', '--drain-timeout', '1s']))
      .result;
    expect(result.code).toBe(3);
    expect(report(ready)).toMatchObject({ result: 'timeout', connections: 1 });
  });

  it('reads ignored listeners from the environment, comma-separated', async () => {
    const envoy = await standIn();
    const ready = readyPath();
    const a = await idleHttp1(envoy.listenerPort('stats'), '/stats/prometheus');
    const b = await idleHttp1(envoy.listenerPort('ready'), '/live');
    cleanups.push(
      () => a.close(),
      () => b.close(),
    );
    const result = await run(shutdownArgs(envoy.adminAddress, ready), {
      ENVOY_SHUTDOWN_CONNECTIONS: 'listeners',
      ENVOY_SHUTDOWN_IGNORE_LISTENERS: 'stats,ready',
    }).result;
    expect(result.code).toBe(0);
    expect(result.logs.find((l) => l.msg === 'shutdown started')).toMatchObject({ connections: 'listeners', ignoreListener: ['stats', 'ready'] });
  });
});

// Unix socket and [::1] admin addresses: real-envoy-contract.test.ts.
describe('shutdown admin addresses', () => {
  it('accepts the http:// form', async () => {
    const envoy = await standIn();
    const ready = readyPath();
    const result = await run(shutdownArgs(`http://${envoy.adminAddress}`, ready)).result;
    expect(result.code).toBe(0);
  });
});

describe('shutdown when the admin API fails', () => {
  it('exits 1 within seconds when nothing listens, and still writes the ready file', async () => {
    const envoy = await standIn();
    const address = envoy.adminAddress;
    await envoy.close(); // Envoy already gone: connections are refused
    const ready = readyPath();
    const cli = run(shutdownArgs(address, ready, ['--drain-timeout', '60s']));
    const result = await cli.result;
    expect(result.code).toBe(1);
    expect(result.exitedAt - cli.startedAt).toBeLessThan(15_000); // a few bounded retries, never the drain timeout
    expect(report(ready)).toMatchObject({ result: 'envoy-unreachable', connections: null, exitCode: 1 });
    // Retried with backoff (0.25, 0.5, 1, 1 s) for up to 3 s: five attempts on an idle machine.
    expect(result.logs.filter((l) => l.msg === 'could not fail health check, retrying').length).toBeGreaterThanOrEqual(2);
    expect(report(ready).elapsedMs).toBeLessThan(3_000 + 1_000);
    expect(result.logs.find((l) => l.level === 'error')?.err).toMatch(/ECONNREFUSED/);
  });

  it('exits 1 when the admin API accepts but never answers', async () => {
    const envoy = await standIn();
    envoy.setAdminFault({ kind: 'hang' });
    const ready = readyPath();
    const result = await run(shutdownArgs(envoy.adminAddress, ready, ['--admin-timeout', '200ms', '--drain-timeout', '60s'])).result;
    expect(result.code).toBe(1);
    expect(report(ready).result).toBe('envoy-unreachable');
    expect(result.logs.find((l) => l.level === 'error')?.err).toMatch(/no answer within 200 ms/);
  });

  it('retries a 5xx for 3 s, then gives up with exit 1', async () => {
    const envoy = await standIn();
    envoy.setAdminFault({ kind: 'status', status: 503 });
    const ready = readyPath();
    const result = await run(shutdownArgs(envoy.adminAddress, ready)).result;
    expect(result.code).toBe(1);
    expect(envoy.calls.filter((c) => c.path === '/healthcheck/fail').length).toBeGreaterThanOrEqual(3);
    expect(report(ready).elapsedMs).toBeGreaterThanOrEqual(2_000);
    expect(envoy.calls.some((c) => c.path === '/drain_listeners')).toBe(false);
  });

  it('does not retry a 4xx from something that is not Envoy', async () => {
    const seen: string[] = [];
    const notEnvoy = createServer((req, res) => {
      seen.push(`${req.method} ${req.url}`);
      res.writeHead(404).end('no such page');
    });
    await new Promise<void>((resolve) => notEnvoy.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise((resolve) => notEnvoy.close(resolve)));
    const ready = readyPath();
    const result = await run(shutdownArgs(`127.0.0.1:${(notEnvoy.address() as { port: number }).port}`, ready)).result;
    expect(result.code).toBe(1);
    expect(seen).toEqual(['POST /healthcheck/fail']);
    expect(result.logs.find((l) => l.level === 'error')?.err).toMatch(/answered 404: no such page/);
  });

  it('waits for a slow answer within --admin-timeout, and counts a slower one as a failed read', async () => {
    const envoy = await standIn();
    const ready = readyPath();
    const idle = await idleHttp1(envoy.listenerPort('ingress'));
    const cli = run(
      shutdownArgs(envoy.adminAddress, ready, [
        '--admin-timeout',
        '500ms',
        '--drain-timeout',
        '30s',
        '--min-drain-duration',
        '100ms',
        '--connections',
        'listeners',
      ]),
    );
    await cli.waitForLog((l) => l.msg === 'draining');
    envoy.setAdminFault({ kind: 'delay', ms: 200 });
    const slowFrom = Date.now();
    await waitForCall(envoy, (c) => isStatsRead(c) && c.time >= slowFrom && c.status === 200);
    expect(cli.logs.some((l) => l.msg === 'connection count unknown: still waiting (unknown is not zero)')).toBe(false);
    envoy.setAdminFault({ kind: 'delay', ms: 1_500 });
    await cli.waitForLog((l) => l.msg === 'connection count unknown: still waiting (unknown is not zero)');
    envoy.setAdminFault(undefined);
    await idle.close();
    const result = await cli.result;
    expect(result.code).toBe(0);
    expect(report(ready)).toMatchObject({ result: 'drained', connections: 0 });
  });

  it('keeps polling through read errors, and takes Envoy for gone once its admin connections fail', async () => {
    const envoy = await standIn();
    const ready = readyPath();
    const idle = await idleHttp1(envoy.listenerPort('ingress'));
    cleanups.push(() => idle.close());
    const cli = run(shutdownArgs(envoy.adminAddress, ready, ['--drain-timeout', '30s', '--min-drain-duration', '100ms', '--connections', 'listeners']));
    await cli.waitForLog((l) => l.msg === 'draining');
    envoy.setAdminFault({ kind: 'garbage' });
    await cli.waitForLog((l) => l.msg === 'connection count unknown: still waiting (unknown is not zero)');
    envoy.setAdminFault(undefined);
    const recoveredAfter = new Date().toISOString();
    await cli.waitForLog((l) => l.msg === 'draining' && l.time > recoveredAfter);
    await envoy.kill();
    const result = await cli.result;
    expect(result.code).toBe(1);
    expect(messages(result)).toContain('envoy is gone: its admin API refuses or drops every connection, so its connections are closed too');
    expect(report(ready)).toMatchObject({ result: 'envoy-unreachable', connections: null });
  });
});

describe('shutdown usage errors', () => {
  it.each([
    [['--bogus'], /unknown option '--bogus'/],
    [['--drain-timeout', '10'], /with a unit/],
    [['--drain-timeout', '5x'], /not a duration/],
    [['--drain-timeout', '-1s'], /must not be negative/],
    [['--drain-timeout', '0s'], /must be greater than 0/],
    [['--min-drain-duration', '1h'], /--min-drain-duration must not be longer than --drain-timeout/],
    [['--check-interval', '0s'], /must be greater than 0/],
    [['--exit-at-connections', '-1'], /not a whole number/],
    [['--exit-at-connections', 'many'], /not a whole number/],
    [['--health-check-failure-delay', '1m'], /--health-check-failure-delay must be shorter than --drain-timeout/],
    [['--connections', 'all'], /not a connection source/],
    [['--ignore-listener', ''], /empty name/],
    [['--admin-address', '10.1.2.3:19000'], /not loopback/],
    [['--admin-address', 'envoy:19000'], /IP literal/],
    [['--ready-file', '/no/such/dir/ready'], /ready file directory \/no\/such\/dir does not exist/],
    [['--log-level', 'loud'], /--log-level <level>' argument 'loud' is invalid/],
    [['--admin-timeout', 'fast'], /not a duration/],
  ])('%j exits 2 with one line and sends nothing to Envoy', async (args, message) => {
    const envoy = await standIn();
    const ready = readyPath();
    const result = await run([...shutdownArgs(envoy.adminAddress, ready), ...args]).result;
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
    expect(result.stderr).toMatch(/^error: /);
    expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(result.stdout).toBe('');
    expect(envoy.calls).toHaveLength(0);
    expect(existsSync(ready)).toBe(false);
  });

  it.each([
    [{ ENVOY_SHUTDOWN_DRAIN_TIMEOUT: 'forever' }, /value 'forever' from env 'ENVOY_SHUTDOWN_DRAIN_TIMEOUT' is invalid/],
    [{ ENVOY_SHUTDOWN_CHECK_INTERVAL: '0' }, /from env 'ENVOY_SHUTDOWN_CHECK_INTERVAL' is invalid/],
    [{ ENVOY_SHUTDOWN_ADMIN_ADDRESS: '0.0.0.0:19000' }, /not loopback/],
  ])('a bad environment variable %j exits 2', async (env, message) => {
    const envoy = await standIn();
    const ready = readyPath();
    const result = await run(['shutdown', '--ready-file', ready], env).result;
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
    expect(envoy.calls).toHaveLength(0);
  });

  it('exits 2 when the ready-file directory is read-only to the tool', async () => {
    const envoy = await standIn();
    const dir = tempDir();
    cleanups.push(dir.cleanup);
    writeFileSync(join(dir.path, 'file'), '');
    const result = await run(shutdownArgs(envoy.adminAddress, join(dir.path, 'file', 'ready'))).result;
    expect(result.code).toBe(2);
    expect(envoy.calls).toHaveLength(0);
  });
});

describe('shutdown options, logs and signals', () => {
  it('takes every option from the environment, flags winning', async () => {
    const envoy = await standIn();
    const ready = readyPath();
    const result = await run(['shutdown', '--check-interval', '50ms'], {
      ENVOY_SHUTDOWN_ADMIN_ADDRESS: envoy.adminAddress,
      ENVOY_SHUTDOWN_READY_FILE: ready,
      ENVOY_SHUTDOWN_DRAIN_TIMEOUT: '4s',
      ENVOY_SHUTDOWN_MIN_DRAIN_DURATION: '250ms',
      ENVOY_SHUTDOWN_EXIT_AT_CONNECTIONS: '3',
      ENVOY_SHUTDOWN_CHECK_INTERVAL: '2s',
      ENVOY_SHUTDOWN_HEALTH_CHECK_FAILURE_DELAY: '0s',
      ENVOY_SHUTDOWN_CONNECTIONS: 'listeners',
      ENVOY_SHUTDOWN_ADMIN_TIMEOUT: '1s',
    }).result;
    expect(result.code).toBe(0);
    expect(result.logs.find((l) => l.msg === 'shutdown started')).toMatchObject({
      connections: 'listeners',
      drainTimeout: '4s',
      minDrainDuration: '250ms',
      exitAtConnections: 3,
      checkInterval: '50ms',
      readyFile: ready,
    });
  });

  it('takes the log level and format from the environment', async () => {
    const envoy = await standIn();
    const ready = readyPath();
    const quiet = await run(shutdownArgs(envoy.adminAddress, ready), { ENVOY_SHUTDOWN_LOG_LEVEL: 'warn' }).result;
    expect(quiet.code).toBe(0);
    expect(quiet.stdout).toBe('');
    const text = await run(shutdownArgs(envoy.adminAddress, ready), { ENVOY_SHUTDOWN_LOG_FORMAT: 'text' }).result;
    expect(text.stdout).toMatch(/INFO {2}shutdown: shutdown finished/);
  });

  it('logs one JSON object per line, numbers in fields', async () => {
    const envoy = await standIn();
    const ready = readyPath();
    const result = await run(shutdownArgs(envoy.adminAddress, ready)).result;
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines.length).toBe(result.logs.length);
    for (const line of result.logs)
      expect(line).toMatchObject({ level: expect.any(String), time: expect.any(String), msg: expect.any(String), component: 'shutdown' });
    const progress = result.logs.filter((l) => l.msg === 'draining');
    expect(progress.length).toBeGreaterThan(0);
    for (const line of progress) {
      expect(typeof line.connections).toBe('number');
      expect(typeof line.elapsedMs).toBe('number');
    }
    expect(result.logs.at(-1)).toMatchObject({ msg: 'shutdown finished', result: 'drained', exitCode: 0, connections: 0 });
  });

  it('logs text for people with --log-format text', async () => {
    const envoy = await standIn();
    const ready = readyPath();
    const result = await run([...shutdownArgs(envoy.adminAddress, ready), '--log-format', 'text']).result;
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^\S+Z INFO {2}shutdown: shutdown started adminAddress=127\.0\.0\.1:\d+/);
    expect(result.stdout).toMatch(/INFO {2}shutdown: shutdown finished result=drained connections=0 elapsedMs=\d+ exitCode=0/);
  });

  it('as a hook inside Kubernetes, copies its logs to PID 1 stdout', async () => {
    const envoy = await standIn();
    const ready = readyPath();
    const dir = tempDir();
    cleanups.push(dir.cleanup);
    const pid1Stdout = join(dir.path, 'pid1-stdout');
    writeFileSync(pid1Stdout, '');
    const result = await run(shutdownArgs(envoy.adminAddress, ready), { KUBERNETES_SERVICE_HOST: '10.96.0.1', ENVOY_SHUTDOWN_HOOK_LOG_PATH: pid1Stdout })
      .result;
    expect(result.code).toBe(0);
    expect(readFileSync(pid1Stdout, 'utf8')).toBe(result.stdout);
  });

  it('falls back to stdout alone when PID 1 stdout cannot be opened', async () => {
    const envoy = await standIn();
    const ready = readyPath();
    const result = await run(shutdownArgs(envoy.adminAddress, ready), {
      KUBERNETES_SERVICE_HOST: '10.96.0.1',
      ENVOY_SHUTDOWN_HOOK_LOG_PATH: '/nonexistent/fd/1',
    }).result;
    expect(result.code).toBe(0);
    expect(messages(result)).toContain('shutdown finished');
  });

  it('on SIGINT stops, exits 130 and writes no ready file', async () => {
    const envoy = await standIn();
    const ready = readyPath();
    const cli = run(shutdownArgs(envoy.adminAddress, ready, ['--min-drain-duration', '4s']));
    await cli.waitForLog((l) => l.msg === 'draining');
    cli.child.kill('SIGINT');
    const result = await cli.result;
    expect(result.code).toBe(130);
    expect(existsSync(ready)).toBe(false);
    expect(result.logs.at(-2)?.msg).toMatch(/^interrupted: no ready file written/);
    expect(result.logs.at(-1)).toMatchObject({ msg: 'shutdown finished', result: 'interrupted', exitCode: 130 });
  });

  it('prints help with the exit codes and version, exit 0', async () => {
    const help = await run(['shutdown', '--help']).result;
    expect(help.code).toBe(0);
    for (const text of ['--admin-address', 'ENVOY_SHUTDOWN_DRAIN_TIMEOUT', 'Exit codes:', 'stats flush', 'terminationGracePeriodSeconds']) {
      expect(help.stdout).toContain(text);
    }
    const version = await run(['--version']).result;
    expect(version.code).toBe(0);
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
  });
});
