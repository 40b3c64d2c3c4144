// Against real Envoy: its own /stats answers pass the strict reading of counts, and a bootstrap
// whose stats_matcher leaves the listener gauges out never reads as "drained".
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Bootstrap } from '../support/chart/bootstrap.js';
import { cleanEnv, startCli, tempDir } from '../support/cli.js';
import { type RealEnvoy, startRealEnvoy } from '../support/real-envoy/process.js';

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** One HTTP listener answering every request itself; admin on loopback. */
function bootstrap(extra: Record<string, unknown> = {}): Bootstrap {
  return {
    admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
    static_resources: {
      listeners: [
        {
          name: 'ingress',
          stat_prefix: 'ingress',
          address: { socket_address: { address: '127.0.0.1', port_value: 0 } },
          filter_chains: [
            {
              filters: [
                {
                  name: 'envoy.filters.network.http_connection_manager',
                  typed_config: {
                    '@type': 'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager',
                    stat_prefix: 'ingress',
                    route_config: { virtual_hosts: [{ name: 'all', domains: ['*'], routes: [{ match: { prefix: '/' }, direct_response: { status: 200 } }] }] },
                    http_filters: [
                      { name: 'envoy.filters.http.router', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router' } },
                    ],
                  },
                },
              ],
            },
          ],
        },
      ],
    },
    ...extra,
  } as Bootstrap;
}

async function envoy(config: Bootstrap): Promise<RealEnvoy> {
  const started = await startRealEnvoy({ bootstrap: config, args: ['--drain-strategy', 'immediate', '--drain-time-s', '1'] });
  cleanups.push(() => started.stop());
  return started;
}

async function shutdown(
  adminAddress: string,
  args: string[],
): Promise<{ code: number | null; report: Record<string, unknown>; logs: ReadonlyArray<Record<string, unknown>> }> {
  const dir = tempDir();
  cleanups.push(dir.cleanup);
  const ready = join(dir.path, 'ready');
  const cli = startCli(
    [
      'shutdown',
      '--admin-address',
      adminAddress,
      '--ready-file',
      ready,
      '--min-drain-duration',
      '300ms',
      '--drain-timeout',
      '1500ms',
      '--check-interval',
      '100ms',
      ...args,
    ],
    cleanEnv(),
  );
  cleanups.push(() => {
    cli.child.kill('SIGKILL');
    return cli.result;
  });
  const result = await cli.result;
  return { code: result.code, report: JSON.parse(readFileSync(ready, 'utf8')) as Record<string, unknown>, logs: result.logs };
}

describe('real Envoy', () => {
  it.each([['listeners'], ['total']])('its /stats answers read as counts (--connections %s): drained, exit 0', async (source) => {
    // `total` decides only on a gauge from a stats flush after the drain began: flush often, and leave time for one.
    const real = await envoy(bootstrap({ stats_flush_interval: '0.1s' }));
    const { code, report } = await shutdown(real.adminAddress, ['--connections', source, '--quiet-period', '100ms', '--drain-timeout', '5s']);
    expect(code).toBe(0);
    expect(report).toMatchObject({ result: 'drained', connections: 0 });
  });

  it('a stats_matcher that leaves out the listener gauges: unknown until the drain timeout, with what to fix', async () => {
    const real = await envoy(bootstrap({ stats_config: { stats_matcher: { exclusion_list: { patterns: [{ prefix: 'listener.' }] } } } }));
    const { code, report, logs } = await shutdown(real.adminAddress, ['--connections', 'listeners']);
    expect(code).toBe(3);
    expect(report).toMatchObject({ result: 'timeout', connections: null });
    const unknown = logs.find((l) => l.msg === 'connection count unknown: still waiting (unknown is not zero)');
    expect(unknown?.err).toMatch(/no listener\.<name>\.downstream_cx_active gauges: if the bootstrap has a stats_config\.stats_matcher/);
  });
});
