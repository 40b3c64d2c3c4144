// Never release Envoy on a guess: `shutdown` (and `status`) against real Envoy behind an admin tap
// whose /stats misbehaves in ways real Envoy cannot be made to on demand. An answer of any kind means Envoy is
// alive: the count is unknown, the drain goes on to its timeout (exit 3), never "drained" and never
// "Envoy exited". Only connections refused several times in a row mean Envoy is gone.
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanEnv, type RunResult, startCli } from '../support/cli.js';
import type { AdminFault } from '../support/real-envoy/admin-tap.js';
import { type DrainTarget, realEnvoyAndReadyFile } from '../support/real-envoy/drain-target.js';

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function setup(): Promise<{ envoy: DrainTarget; ready: string }> {
  return realEnvoyAndReadyFile((cleanup) => cleanups.push(cleanup));
}

function run(args: string[]): ReturnType<typeof startCli> {
  const cli = startCli(args, cleanEnv());
  cleanups.push(() => {
    cli.child.kill('SIGKILL');
    return cli.result.catch(() => undefined);
  });
  return cli;
}

const MIN_DRAIN_MS = 800;
const DRAIN_TIMEOUT_MS = 1_200;

function drainArgs(envoy: DrainTarget, ready: string, extra: string[] = []): string[] {
  return [
    'shutdown',
    '--admin-address',
    envoy.adminAddress,
    '--ready-file',
    ready,
    '--min-drain-duration',
    `${MIN_DRAIN_MS}ms`,
    '--drain-timeout',
    `${DRAIN_TIMEOUT_MS}ms`,
    '--check-interval',
    '100ms',
    ...extra,
  ];
}

function report(path: string): Record<string, unknown> {
  return JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
}

/** The drain ran to its timeout with the count unknown: exit 3, honest report, every read failure logged. */
function expectUnknownUntilTimeout(result: RunResult, ready: string, err: RegExp): void {
  expect(result.code).toBe(3);
  expect(report(ready)).toMatchObject({ result: 'timeout', connections: null, exitCode: 3 });
  expect(report(ready).elapsedMs).toBeGreaterThanOrEqual(DRAIN_TIMEOUT_MS);
  const msgs = result.logs.map((l) => l.msg);
  expect(msgs).not.toContain('drain completed');
  expect(msgs.some((m) => m.startsWith('envoy is gone'))).toBe(false);
  expect(msgs).toContain('minimum drain period reached');
  const unknown = result.logs.filter((l) => l.msg === 'connection count unknown: still waiting (unknown is not zero)');
  expect(unknown.length).toBeGreaterThan(0);
  for (const line of unknown) expect(line.err).toMatch(err);
  expect(result.logs.find((l) => l.msg === 'drain timeout exceeded')).toMatchObject({ connections: null });
}

const text = (stats: ReadonlyArray<readonly [string, string]>): string => stats.map(([name, value]) => `${name}: ${value}\n`).join('');
const PROMETHEUS = '/stats/prometheus';
/** A Prometheus answer whose names cannot be read back (a listener's own dotted stat_prefix): the drain reads the text /stats instead. */
const UNREADABLE_NAMES: AdminFault = { kind: 'answer', status: 200, body: 'envoy_listener_name_downstream_cx_active{envoy_listener_address="custom"} 0\n' };

/** The drain's reads of the stats meet `fault`: through the Prometheus endpoint, or through the text /stats it falls back to. */
function faultReads(envoy: DrainTarget, format: 'prometheus' | 'text', fault: AdminFault): void {
  if (format === 'prometheus') {
    envoy.setAdminFault(fault, PROMETHEUS);
    return;
  }
  envoy.setAdminFault(UNREADABLE_NAMES, PROMETHEUS);
  envoy.setAdminFault(fault, '/stats');
}

describe('an HTTP answer is not a dead Envoy', () => {
  it.each<['prometheus' | 'text', string, AdminFault, RegExp]>([
    ['prometheus', '500', { kind: 'status', status: 500 }, /answered 500/],
    ['prometheus', '503', { kind: 'status', status: 503 }, /answered 503/],
    ['prometheus', '404', { kind: 'status', status: 404 }, /answered 404/],
    ['text', '404', { kind: 'status', status: 404 }, /answered 404/],
    ['prometheus', '400', { kind: 'status', status: 400 }, /answered 400/],
    ['prometheus', 'a redirect', { kind: 'answer', status: 302, body: '', location: 'http://127.0.0.1:1/' }, /answered 302/],
    ['prometheus', 'a 200 that is not Prometheus text', { kind: 'answer', status: 200, body: '<html>maintenance</html>' }, /not a Prometheus sample/],
    ['prometheus', 'a 200 with JSON', { kind: 'answer', status: 200, body: '{"stats":[]}' }, /not a Prometheus sample/],
    ['text', 'a 200 that is not stats', { kind: 'answer', status: 200, body: '<html>maintenance</html>' }, /not `name: value`/],
    ['text', 'a 200 with JSON', { kind: 'answer', status: 200, body: '{"ok":true}' }, /not `name: value`/],
    ['text', 'garbage', { kind: 'garbage' }, /not `name: value`/],
  ])('%s stats answering %s: the count is unknown until the drain timeout, exit 3', async (format, _what, fault, err) => {
    const { envoy, ready } = await setup();
    faultReads(envoy, format, fault);
    const result = await run(drainArgs(envoy, ready)).result;
    expectUnknownUntilTimeout(result, ready, err);
  });

  it('a read that times out is not a dead Envoy either', async () => {
    const { envoy, ready } = await setup();
    envoy.setAdminFault({ kind: 'hang' }, PROMETHEUS);
    const result = await run(drainArgs(envoy, ready, ['--admin-timeout', '150ms'])).result;
    expectUnknownUntilTimeout(result, ready, /no answer within \d+ ms/);
  });
});

describe('listeners mode: missing or malformed gauges are unknown, never 0', () => {
  const active = 'listener.ingress.downstream_cx_active';
  const total = 'listener.ingress.downstream_cx_total';
  const series = (stat: 'active' | 'total', value: string): string => `envoy_listener_downstream_cx_${stat}{envoy_listener_address="ingress"} ${value}\n`;
  it.each<[string, string, string, RegExp]>([
    [
      'no listener gauges (a stats_matcher excludes them)',
      '',
      '',
      /no listener\.<name>\.downstream_cx_active gauges: if the bootstrap has a stats_config\.stats_matcher/,
    ],
    ['only the admin listener', text([['listener.admin.downstream_cx_active', '1']]), 'envoy_listener_admin_downstream_cx_active{} 1\n', /stats_matcher/],
    ['a counter without its gauge', text([[total, '4']]), series('total', '4'), /no listener\.ingress\.downstream_cx_active gauge/],
    ['a string', text([[active, '"0"']]), series('active', '"0"'), /is "\\"0\\"", not a whole number >= 0/],
    ['null', text([[active, 'null']]), series('active', 'NaN'), /is "(null|NaN)", not a whole number/],
    ['a float', text([[active, '0.5']]), series('active', '0.5'), /is "0\.5", not a whole number/],
    ['Infinity', text([[active, 'inf']]), series('active', '+Inf'), /not a whole number/],
    ['a negative count', text([[active, '-5']]), series('active', '-5'), /is "-5", not a whole number >= 0/],
    [
      'duplicate entries',
      text([
        [active, '0'],
        [active, '3'],
      ]),
      series('active', '0') + series('active', '3'),
      /more than once/,
    ],
  ])('%s', async (_what, textBody, prometheusBody, err) => {
    // Each format in turn, the other answering the same (or unreadable): a drain may try the other format for a cheaper read.
    for (const prometheus of [UNREADABLE_NAMES, { kind: 'answer', status: 200, body: prometheusBody } as const]) {
      const { envoy, ready } = await setup();
      envoy.setAdminFault(prometheus, PROMETHEUS);
      envoy.setAdminFault({ kind: 'answer', status: 200, body: textBody }, '/stats');
      const result = await run(drainArgs(envoy, ready, ['--connections', 'listeners'])).result;
      expectUnknownUntilTimeout(result, ready, err);
    }
  });

  it('a quiet period with no accepted-connection counters is unknown, never quiet', async () => {
    const { envoy, ready } = await setup();
    envoy.setAdminFault({ kind: 'answer', status: 200, body: 'envoy_server_total_connections{} 0\n' }, PROMETHEUS);
    envoy.setAdminFault({ kind: 'answer', status: 200, body: 'server.total_connections: 0\n' }, '/stats');
    const result = await run(drainArgs(envoy, ready, ['--quiet-period', '200ms'])).result;
    expectUnknownUntilTimeout(result, ready, /stats_matcher/);
  });
});

describe('bounded reads', () => {
  it('a stats answer past 2 MiB is cut there and read as unknown', async () => {
    const { envoy, ready } = await setup();
    envoy.setAdminFault({ kind: 'flood' }, PROMETHEUS);
    const result = await run(drainArgs(envoy, ready)).result;
    expectUnknownUntilTimeout(result, ready, /more than 2097152 bytes/);
  });

  it('a hanging admin API gives up starting the drain at the documented bound, not 5 admin timeouts later', async () => {
    const { envoy, ready } = await setup();
    envoy.setAdminFault({ kind: 'hang' });
    const result = await run(drainArgs(envoy, ready, ['--admin-timeout', '2s', '--drain-timeout', '60s'])).result;
    expect(result.code).toBe(1);
    expect(report(ready)).toMatchObject({ result: 'envoy-unreachable', connections: null });
    // The tool's own clock: 3 s (START_GIVE_UP_MS), plus timer lateness on a busy machine; 12.75 s before.
    const elapsed = report(ready).elapsedMs as number;
    expect(elapsed).toBeGreaterThanOrEqual(2_900);
    expect(elapsed).toBeLessThan(4_500);
    expect(result.logs.find((l) => l.level === 'error')?.err).toMatch(/no answer within/);
  });

  it('--help states the real give-up times', async () => {
    const help = await run(['shutdown', '--help']).result;
    expect(help.stdout).toMatch(/3 s \(or one --admin-timeout, if longer/);
    expect(help.stdout).toMatch(/refused 3 times in a row/);
  });
});

describe('only refused connections mean Envoy is gone', () => {
  it('Envoy killed mid-drain: exit 1 within about a second, before the minimum drain', async () => {
    const { envoy, ready } = await setup();
    const cli = run(drainArgs(envoy, ready, ['--min-drain-duration', '20s', '--drain-timeout', '30s']));
    await cli.waitForLog((l) => l.msg === 'graceful drain started');
    await envoy.kill();
    const result = await cli.result;
    expect(result.code).toBe(1);
    expect(report(ready)).toMatchObject({ result: 'envoy-unreachable', connections: null });
    expect(result.logs.find((l) => l.msg.startsWith('envoy is gone'))).toMatchObject({ refusedReads: 3 });
  });
});

describe('status and --dry-run report an unusable count apart from an unreachable Envoy', () => {
  it.each([
    ['status', ['status', '--interval', '100ms']],
    ['shutdown --dry-run', ['shutdown', '--dry-run']],
  ])('%s exits 3 and says why, never printing a number it did not read', async (_command, [command, ...rest]) => {
    const { envoy, ready } = await setup();
    envoy.setAdminFault({ kind: 'answer', status: 200, body: 'envoy_listener_downstream_cx_active{envoy_listener_address="ingress"} -5\n' }, PROMETHEUS);
    const result = await run([command ?? '', '--admin-address', envoy.adminAddress, '--ready-file', ready, '--connections', 'listeners', ...rest]).result;
    expect(result.code).toBe(3);
    expect(result.stdout).toMatch(/^ *envoy\s+LIVE, health check passing$/m); // the dry run indents its report
    expect(result.stdout).toMatch(
      /^ *connections\s+unknown: envoy_listener_downstream_cx_active\{envoy_listener_address="ingress"\} is "-5", not a whole number >= 0 as Envoy writes one$/m,
    );
    expect(result.stdout).not.toMatch(/-5 active/);
  });
});
