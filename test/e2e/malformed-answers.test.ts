// Never a count from a malformed answer. Real Envoy (the chart's bootstrap, `ingress` proxying to
// an application) holds one request in flight, which the application answers only when the test
// lets it; the admin tap in front of Envoy rewrites, cuts or floods Envoy's own stats answers.
// Whatever the answer, while the request is in flight the drain must not end as drained, nor as
// "Envoy gone": the count is unknown, so it holds to its drain timeout (exit 3, `connections: null`).
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FORMS, type Form } from '../../bench/support/processes.js';
import type { Bootstrap } from '../support/chart/bootstrap.js';
import { routedToUpstream } from '../support/chart/pod-envoy.js';
import { cleanEnv, type RunningCli, type RunResult, startCli } from '../support/cli.js';
import { longRequest, type SideResult } from '../support/protocols/clients.js';
import { type DrainTarget, realEnvoyAndReadyFile } from '../support/real-envoy/drain-target.js';
import { startUpstream, type Upstream } from '../support/real-envoy/upstream.js';
import { readRusage, underWait4 } from '../support/rusage.js';

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const MIN_DRAIN_MS = 300;
const DRAIN_TIMEOUT_MS = 1_500;
const PROMETHEUS = '/stats/prometheus';
const TEXT_STATS = '/stats';
const MiB = 1024 * 1024;

interface HeldDrain {
  readonly envoy: DrainTarget;
  readonly ready: string;
  readonly upstream: Upstream;
  /** The request held in flight on `ingress`; it ends once upstream.release() is called. */
  readonly request: Promise<SideResult>;
}

/** Real Envoy behind its tap, `ingress` proxying to a fresh application that holds one request in flight. */
async function heldRequest(edit: (bootstrap: Bootstrap) => Bootstrap = (bootstrap) => bootstrap): Promise<HeldDrain> {
  const upstream = await startUpstream();
  cleanups.push(() => upstream.close());
  const { envoy, ready } = await realEnvoyAndReadyFile((cleanup) => cleanups.push(cleanup), {
    edit: (bootstrap) => routedToUpstream(edit(bootstrap), upstream.port),
  });
  const request = longRequest(envoy.listenerPort('ingress'), 'http1', '/held');
  const first = await Promise.race([upstream.slowInFlight(1).then(() => undefined), request]);
  if (first !== undefined) throw new Error(`the held request ended before the drain: ${first.failure ?? 'answered'}`);
  return { envoy, ready, upstream, request };
}

/** `shutdown` against the tap; `command` runs it another way than bin/ (the single executable, under wait4). */
function drain(
  held: HeldDrain,
  { timeoutMs = DRAIN_TIMEOUT_MS, checkInterval = '100ms', command }: { timeoutMs?: number; checkInterval?: string; command?: readonly string[] } = {},
): RunningCli {
  const args = ['shutdown', '--admin-address', held.envoy.adminAddress, '--ready-file', held.ready, '--connections', 'listeners'];
  const cli = startCli(
    [...args, '--min-drain-duration', `${MIN_DRAIN_MS}ms`, '--drain-timeout', `${timeoutMs}ms`, '--check-interval', checkInterval],
    cleanEnv(),
    command,
  );
  cleanups.push(() => {
    // SIGINT: the rusage wrapper passes it on to the command; SIGKILL would leave the command running.
    cli.child.kill('SIGINT');
    return cli.result.catch(() => undefined);
  });
  return cli;
}

/** How the drain ended, in one object: a failure shows all of it on one line. */
function ending(result: RunResult, ready: string): Record<string, unknown> {
  const report = JSON.parse(readFileSync(ready, 'utf8')) as Record<string, unknown>;
  return { exitCode: result.code, result: report.result, connections: report.connections };
}

/**
 * The drain held to its timeout with the count unknown while the request was in flight, then the
 * request, released, was answered: Envoy never cut it.
 */
async function expectHeldToTimeout(held: HeldDrain, result: RunResult, timeoutMs = DRAIN_TIMEOUT_MS): Promise<void> {
  expect(held.upstream.answered(), 'the held request was answered before the drain ended').toBe(0);
  expect(ending(result, held.ready)).toEqual({ exitCode: 3, result: 'timeout', connections: null });
  expect(result.logs.map((l) => l.msg)).not.toContain('drain completed');
  const report = JSON.parse(readFileSync(held.ready, 'utf8')) as { elapsedMs: number };
  expect(report.elapsedMs).toBeGreaterThanOrEqual(timeoutMs);
  held.upstream.release();
  expect((await held.request).failure).toBeUndefined();
}

/** Every sample value of a Prometheus answer written as `value`. */
const prometheusValues =
  (value: string) =>
  (text: string): string =>
    text
      .split('\n')
      .map((line) => (line === '' || line.startsWith('#') ? line : line.replace(/ \S+$/, ` ${value}`)))
      .join('\n');

/** Every value of a text /stats answer (`name: value` lines) written as `value`. */
const textValues =
  (value: string) =>
  (text: string): string =>
    text.replace(/^(.*): \S+$/gm, `$1: ${value}`);

/** A dotted stat_prefix on `ingress`: its Prometheus names cannot be read back, so the drain reads the text /stats. */
function dottedIngress(bootstrap: Bootstrap): Bootstrap {
  const listeners = (bootstrap.static_resources?.listeners ?? []).map((l) => (l.name === 'ingress' ? { ...l, stat_prefix: 'ingress.edge' } : l));
  return { ...bootstrap, static_resources: { ...bootstrap.static_resources, listeners } };
}

const statsCalls = (envoy: DrainTarget, path: string): number => envoy.calls.filter((c) => c.method === 'GET' && c.path === path).length;

describe('counts not written as Envoy writes them are unknown, never a count', () => {
  // The control: the same rewrite with a count as Envoy writes one is read as that count. (It
  // releases Envoy with the request in flight: the rewrite lies, and the drain believes it.)
  it.each([
    ['/stats/prometheus', (bootstrap: Bootstrap) => bootstrap],
    ['the text /stats', dottedIngress],
  ])('control: %s rewritten to "0" reads as 0 connections', async (_read, edit) => {
    const held = await heldRequest(edit);
    // Both formats: the drain may try the other one for a cheaper read.
    held.envoy.setAdminFault({ kind: 'rewrite', body: prometheusValues('0') }, PROMETHEUS);
    held.envoy.setAdminFault({ kind: 'rewrite', body: textValues('0') }, TEXT_STATS);
    const result = await drain(held).result;
    expect(ending(result, held.ready)).toEqual({ exitCode: 0, result: 'drained', connections: 0 });
    held.upstream.release();
    await held.request;
  });

  it.each(['0x0', '0b0', '0o0', '0e0', '0.0', '+0', '-0', ' 0', 'NaN', 'Inf', '+Inf', '1e0'])(
    '/stats/prometheus with every value written %j',
    async (value) => {
      const held = await heldRequest();
      held.envoy.setAdminFault({ kind: 'rewrite', body: prometheusValues(value) }, PROMETHEUS);
      const result = await drain(held).result;
      expect(statsCalls(held.envoy, PROMETHEUS)).toBeGreaterThan(0);
      await expectHeldToTimeout(held, result);
    },
  );

  it.each(['0x0', '1e0', '0.0', '-0', '+0', ' 0', 'NaN'])('the text /stats with every value written %j', async (value) => {
    const held = await heldRequest(dottedIngress);
    held.envoy.setAdminFault({ kind: 'rewrite', body: textValues(value) }, TEXT_STATS);
    const result = await drain(held).result;
    // The drain went to the text /stats, as a dotted stat_prefix makes it.
    expect(statsCalls(held.envoy, TEXT_STATS)).toBeGreaterThan(0);
    await expectHeldToTimeout(held, result);
  });
});

describe('an answer cut short is not a dead Envoy', () => {
  it('status line, headers and half the body, then the connection closed: unknown until the drain timeout', async () => {
    const held = await heldRequest();
    held.envoy.setAdminFault({ kind: 'cut' }, PROMETHEUS);
    held.envoy.setAdminFault({ kind: 'cut' }, TEXT_STATS);
    const result = await drain(held).result;
    expect(statsCalls(held.envoy, PROMETHEUS)).toBeGreaterThan(0);
    await expectHeldToTimeout(held, result);
  });

  it('a connection closed before any answer still means Envoy is gone: exit 1', async () => {
    const held = await heldRequest();
    held.envoy.setAdminFault({ kind: 'close' }, PROMETHEUS);
    held.envoy.setAdminFault({ kind: 'close' }, TEXT_STATS);
    const result = await drain(held).result;
    expect(ending(result, held.ready)).toEqual({ exitCode: 1, result: 'envoy-unreachable', connections: null });
  });
});

describe('an answer far over the size bound', () => {
  const FLOOD_BYTES = 300 * MiB;
  const LONG_DRAIN_MS = 8_000;
  const MAX_PEAK_MIB = 100;

  it.each<Form>(['executable', 'bundle'])(
    '300 MiB of samples at every stats read of an 8 s drain, run as the %s: bounded memory, never drained',
    async (form) => {
      const held = await heldRequest();
      held.envoy.setAdminFault({ kind: 'flood', prometheus: true, maxBytes: FLOOD_BYTES }, PROMETHEUS);
      held.envoy.setAdminFault({ kind: 'flood', maxBytes: FLOOD_BYTES }, TEXT_STATS);
      const usageFile = join(dirname(held.ready), 'rusage.json');
      const command = underWait4(usageFile, FORMS[form].command);
      const result = await drain(held, { timeoutMs: LONG_DRAIN_MS, checkInterval: '1s', command }).result;
      const reads = held.envoy.calls.filter((c) => c.path === PROMETHEUS || c.path === TEXT_STATS);
      // About one read a second: each met the flood, and none was sent past its bound.
      expect(reads.length).toBeGreaterThanOrEqual(4);
      for (const read of reads) expect(read.floodBytes).toBeGreaterThan(0);
      expect(Math.max(...reads.map((r) => r.floodBytes))).toBeLessThanOrEqual(FLOOD_BYTES);
      await expectHeldToTimeout(held, result, LONG_DRAIN_MS);
      const peakMiB = readRusage(usageFile).peakKiB / 1024;
      expect(peakMiB, `peak RSS ${peakMiB.toFixed(1)} MiB`).toBeLessThan(MAX_PEAK_MIB);
    },
    60_000,
  );
});
