// `shutdown --quiet-period` on real Envoy: the drain ends only once new connections have stopped arriving.
import { afterEach, describe, expect, it } from 'vitest';
import { cleanEnv, startCli } from '../support/cli.js';
import { request } from '../support/protocols/clients.js';
import { type DrainTarget, realEnvoyAndReadyFile } from '../support/real-envoy/drain-target.js';
import { expectedStatsReads, isStatsRead } from '../support/stats-reads.js';
import { waitFor } from '../support/traffic/pod-conditions.js';

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function setup(): Promise<{ envoy: DrainTarget; ready: string }> {
  return realEnvoyAndReadyFile((cleanup) => cleanups.push(cleanup));
}

/**
 * A client arriving every `everyMs` with one request on a fresh connection, until stopped. Resolves
 * with when the last one set out: its connection cannot have been accepted before.
 */
function arrivals(port: number, everyMs: number): { stop(): Promise<number> } {
  let stopped = false;
  let last = 0;
  const loop = (async () => {
    while (!stopped) {
      last = Date.now();
      await request({ port }, '/').catch(() => undefined); // agent: false, so each request is a new connection
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
      return last;
    },
  };
}

function shutdown(adminAddress: string, ready: string, extra: string[]): ReturnType<typeof startCli> {
  const cli = startCli(
    [
      'shutdown',
      '--admin-address',
      adminAddress,
      '--ready-file',
      ready,
      '--connections',
      'listeners',
      '--ignore-listener',
      'stats',
      '--min-drain-duration',
      '200ms',
      '--check-interval',
      '100ms',
      '--drain-timeout',
      '20s',
      ...extra,
    ],
    cleanEnv(),
  );
  cleanups.push(() => {
    cli.child.kill('SIGKILL');
    return cli.result;
  });
  return cli;
}

describe('shutdown --quiet-period', () => {
  it('waits until no new connection has arrived for the quiet period', async () => {
    const { envoy, ready } = await setup();
    const clients = arrivals(envoy.listenerPort('ingress'), 100);
    const cli = shutdown(envoy.adminAddress, ready, ['--quiet-period', '1s']);
    // Past the minimum drain, clients still arriving restart the quiet period, again and again.
    await cli.waitForLog((l) => l.msg === 'minimum drain period reached');
    const restartsAfterMinimum = (): number =>
      cli.logs
        .slice(cli.logs.findIndex((l) => l.msg === 'minimum drain period reached'))
        .filter((l) => l.msg === 'new connections arrived: quiet period restarted').length;
    await waitFor('two restarts after the minimum drain', () => restartsAfterMinimum() >= 2);
    expect(cli.child.exitCode).toBeNull(); // clients keep arriving: not finished
    const lastArrival = await clients.stop();
    const result = await cli.result;
    expect(result.code).toBe(0);
    expect(result.exitedAt - lastArrival).toBeGreaterThanOrEqual(1_000);
    const restarts = result.logs.filter((l) => l.msg === 'new connections arrived: quiet period restarted');
    expect(restarts.length).toBeGreaterThan(1);
    for (const line of restarts) expect(line.newConnections).toBeGreaterThan(0);
    expect(result.logs.map((l) => l.msg)).toEqual(
      expect.arrayContaining(['quiet period started', 'quiet period reached: no new connections', 'drain completed']),
    );
  });

  it('without it, the same drain ends at the minimum drain while clients still arrive', async () => {
    const { envoy, ready } = await setup();
    const clients = arrivals(envoy.listenerPort('ingress'), 150);
    cleanups.push(() => clients.stop());
    const result = await shutdown(envoy.adminAddress, ready, []).result;
    expect(result.code).toBe(0);
    expect(result.logs.some((l) => l.msg.startsWith('new connections'))).toBe(false);
    expect(result.logs.find((l) => l.msg === 'shutdown finished')?.elapsedMs).toBeLessThan(5_000);
  });

  it('is not broken by new connections on an ignored listener (a scraper reconnecting)', async () => {
    const { envoy, ready } = await setup();
    const scraper = arrivals(envoy.listenerPort('stats'), 100);
    cleanups.push(() => scraper.stop());
    const result = await shutdown(envoy.adminAddress, ready, ['--quiet-period', '500ms']).result;
    expect(result.code).toBe(0);
    expect(result.logs.some((l) => l.msg === 'new connections arrived: quiet period restarted')).toBe(false);
    expect(result.logs.find((l) => l.msg === 'shutdown finished')?.elapsedMs).toBeGreaterThanOrEqual(500);
  });

  it('with --connections total reads the gauge and the listener counters in one request', async () => {
    const { envoy, ready } = await setup();
    const result = await shutdown(envoy.adminAddress, ready, ['--connections', 'total', '--quiet-period', '300ms']).result;
    expect(result.code).toBe(0);
    const reads = envoy.calls.filter(isStatsRead).map((c) => `${c.method} ${c.path}?${c.query}`);
    expect(reads.length).toBeGreaterThan(0);
    expect(reads).toEqual(expectedStatsReads({ server: true }, reads));
  });

  it('is bounded by the drain timeout', async () => {
    const { envoy, ready } = await setup();
    const clients = arrivals(envoy.listenerPort('ingress'), 100);
    cleanups.push(() => clients.stop());
    const result = await shutdown(envoy.adminAddress, ready, ['--quiet-period', '1s', '--drain-timeout', '2s']).result;
    expect(result.code).toBe(3);
    expect(result.logs.map((l) => l.msg)).toContain('drain timeout exceeded');
  });
});
