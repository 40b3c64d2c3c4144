// The drain an idle row goes through (our `shutdown`, which must not wait for the idle connection),
// and the proof that Envoy's drain is in force while the idle connection under test has been told
// nothing: a fresh connection of the same protocol gets its drain signal (Connection: close, a
// GOAWAY) on its first response.
import { once } from 'node:events';
import { expect } from 'vitest';
import { http2Connection, idleHttp1 } from './clients.js';
import { drainStartedAt, IDLE_DRAIN_BOUND_MS, startShutdown } from './drain-run.js';
import { connectH3 } from './h3.js';
import type { ProtocolsEnvoy } from './protocols-envoy.js';

export type Probe =
  | { readonly kind: 'http1'; readonly port: number; readonly servername?: string }
  | { readonly kind: 'http2'; readonly port: number }
  | { readonly kind: 'http3'; readonly port: number; readonly servername: string };

/**
 * Runs our `shutdown` with idle connections ignored: with only idle connections left it must end,
 * drained, within the minimum drain + quiet period + 1 s of starting Envoy's drain. Then shows with
 * `probe` that Envoy's drain is in force.
 */
export async function drainIdle(envoy: ProtocolsEnvoy, defer: (cleanup: () => unknown) => void, probe: Probe): Promise<void> {
  const cli = startShutdown(envoy, defer);
  const result = await cli.result;
  expect(result.code).toBe(0);
  expect(result.exitedAt - drainStartedAt(envoy)).toBeLessThanOrEqual(IDLE_DRAIN_BOUND_MS);
  expect(result.logs.find((line) => line.msg === 'shutdown finished')?.result).toBe('drained');
  await expectDrainSignal(probe, defer);
}

/** A fresh connection's first response carries Envoy's drain signal. */
async function expectDrainSignal(probe: Probe, defer: (cleanup: () => unknown) => void): Promise<void> {
  if (probe.kind === 'http1') {
    const fresh = await idleHttp1(probe.port, '/', probe.servername === undefined ? {} : { servername: probe.servername });
    defer(() => fresh.close());
    expect(fresh.first).toEqual({ status: 200, connection: 'close' });
  } else if (probe.kind === 'http2') {
    const fresh = await http2Connection(probe.port);
    defer(() => fresh.close());
    const goaway = fresh.goaways.length > 0 ? Promise.resolve() : once(fresh.session, 'goaway');
    expect((await fresh.get('/')).status).toBe(200);
    await goaway;
    expect(fresh.goaways.map((g) => g.code)).toEqual([0]);
  } else {
    const fresh = await connectH3(probe.port, probe.servername);
    defer(() => fresh.close());
    fresh.get('/');
    await fresh.waitFor((e) => e.event === 'response' && e.status === 200);
    await fresh.waitFor((e) => e.event === 'goaway');
  }
}
