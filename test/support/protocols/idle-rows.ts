// The drain an idle row goes through, and the proof that Envoy's drain is in force while the idle
// connection under test has been told nothing: a fresh connection of the same protocol gets its
// drain signal (Connection: close, a GOAWAY) on its first response.
import { once } from 'node:events';
import { expect } from 'vitest';
import { get } from '../real-envoy/process.js';
import { idleHttp1, http2Connection } from './clients.js';
import { connectH3 } from './h3.js';
import type { ProtocolsEnvoy } from './protocols-envoy.js';

export type Probe =
  | { readonly kind: 'http1'; readonly port: number; readonly servername?: string }
  | { readonly kind: 'http2'; readonly port: number }
  | { readonly kind: 'http3'; readonly port: number; readonly servername: string };

/**
 * Drains Envoy the way our `shutdown` starts a drain (health check failed, then a graceful drain
 * that leaves Envoy running), then shows with `probe` that the drain is in force.
 */
export async function drainIdle(envoy: ProtocolsEnvoy, defer: (cleanup: () => unknown) => void, probe: Probe): Promise<void> {
  for (const path of ['/healthcheck/fail', '/drain_listeners?graceful&skip_exit']) {
    expect((await get(envoy.target.adminAddress, path, 'POST')).status).toBe(200);
  }
  await expectDrainSignal(probe, defer);
}

/** A fresh connection's first response carries Envoy's drain signal. */
export async function expectDrainSignal(probe: Probe, defer: (cleanup: () => unknown) => void): Promise<void> {
  if (probe.kind === 'http1') {
    const fresh = await idleHttp1(probe.port, probe.servername);
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
