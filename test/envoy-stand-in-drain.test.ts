// The stand-in's drain timeline (reference: "Drain timeline"): the drainClose() decision, then a
// graceful /drain_listeners seen from real client sockets.
import { describe, expect, it, vi } from 'vitest';
import { DrainSequence } from './support/envoy/drain.js';
import { standInHarness } from './support/envoy/harness.js';
import { MAX_STREAM_ID } from './support/envoy/http2-drain.js';
import { adminRequest, RawHttp1Client } from './support/envoy/http1-client.js';
import type { EnvoyStandIn } from './support/envoy/stand-in.js';

const { start, h1, h2, tcp } = standInHarness();
const post = (standIn: EnvoyStandIn, target: string): Promise<unknown> => adminRequest(standIn.adminAddress, 'POST', target);
const refused = (port: number): Promise<unknown> => expect(RawHttp1Client.connect(port)).rejects.toMatchObject({ code: 'ECONNREFUSED' });

describe('drainClose() decision', () => {
  const target = { drainType: 'MODIFY_ONLY', trafficDirection: 'UNSPECIFIED' } as const;
  it.each([
    { strategy: 'immediate', elapsedMs: 0, random: 5, expected: true },
    { strategy: 'gradual', elapsedMs: 0, random: 0, expected: false },
    { strategy: 'gradual', elapsedMs: 999, random: 0, expected: false },
    { strategy: 'gradual', elapsedMs: 1000, random: 0, expected: true },
    { strategy: 'gradual', elapsedMs: 5999, random: 5, expected: false },
    { strategy: 'gradual', elapsedMs: 6000, random: 5, expected: true },
    { strategy: 'gradual', elapsedMs: 3000, random: 10 + 2, expected: true },
    { strategy: 'gradual', elapsedMs: 9999, random: 9, expected: false },
    { strategy: 'gradual', elapsedMs: 10_000, random: 9, expected: true },
  ] as const)('$strategy after $elapsedMs ms with rand $random -> $expected (drain time 10 s)', ({ strategy, elapsedMs, random, expected }) => {
    let now = 1_000_000;
    const drain = new DrainSequence({ strategy, drainTimeSeconds: 10, now: () => now, random: () => random });
    expect(drain.drainClose(target, false)).toBe(false);
    drain.start(false, () => {});
    now += elapsedMs;
    expect(drain.drainClose(target, false)).toBe(expected);
    drain.dispose();
  });

  it('health check failure drains DEFAULT listeners only, sequence or not', () => {
    const drain = new DrainSequence({ strategy: 'gradual', drainTimeSeconds: 10 });
    expect(drain.drainClose({ drainType: 'DEFAULT', trafficDirection: 'UNSPECIFIED' }, true)).toBe(true);
    expect(drain.drainClose({ drainType: 'MODIFY_ONLY', trafficDirection: 'UNSPECIFIED' }, true)).toBe(false);
  });

  it('inboundonly covers INBOUND listeners only; a second start changes nothing', () => {
    let now = 0;
    const drain = new DrainSequence({ strategy: 'immediate', drainTimeSeconds: 10, now: () => now });
    expect(drain.start(true, () => {})).toBe(true);
    now = 500;
    expect(drain.start(false, () => {})).toBe(false);
    expect(drain.startedAt).toBe(0);
    expect(drain.drainClose({ drainType: 'MODIFY_ONLY', trafficDirection: 'INBOUND' }, false)).toBe(true);
    expect(drain.drainClose({ drainType: 'MODIFY_ONLY', trafficDirection: 'OUTBOUND' }, false)).toBe(false);
    drain.dispose();
  });
});

describe('graceful drain, immediate strategy', () => {
  it('closes HTTP/1.1 at its next response, leaves idle and TCP connections, keeps accepting', async () => {
    const standIn = await start({
      listeners: [{ name: 'ingress', kind: 'http' }, { name: 'db', kind: 'tcp' }],
      drainStrategy: 'immediate',
    });
    const port = standIn.listenerPort('ingress');
    const busy = await h1(port);
    const idle = await h1(port);
    expect((await busy.request('GET', '/')).headers['connection']).toBe('keep-alive');
    expect((await idle.request('GET', '/')).headers['connection']).toBe('keep-alive');
    const echo = await tcp(standIn.listenerPort('db'));

    expect(await post(standIn, '/drain_listeners?graceful')).toMatchObject({ status: 200 });
    expect(standIn.drainStartedAt).toBeDefined();
    const response = await busy.request('GET', '/after');
    expect(response).toMatchObject({ status: 200, body: 'envoy stand-in: listener ingress\n' });
    expect(response.headers['connection']).toBe('close');
    await busy.closed;

    // New connections are still accepted, and told to close at once.
    const late = await h1(port);
    expect((await late.request('GET', '/')).headers['connection']).toBe('close');
    await late.closed;
    expect(standIn.stat('http.ingress.downstream_cx_drain_close')).toBe(2);

    // Idle keep-alive and TCP connections are left alone.
    expect(idle.isClosed).toBe(false);
    echo.write('still here');
    expect(String(await new Promise((resolve) => echo.once('data', resolve)))).toBe('still here');
    expect(standIn.stat('listener.ingress.downstream_cx_active')).toBe(1);
    expect(standIn.stat('listener.db.downstream_cx_active')).toBe(1);
    expect(standIn.state).toBe('LIVE');
  });

  it('HTTP/2: GOAWAY 2^31-1, new streams still served, final GOAWAY after drain_timeout, close when streams finish', async () => {
    // Responses outlast drain_timeout, so a stream is still open when the final GOAWAY goes.
    const httpDrainTimeoutMs = 500;
    const standIn = await start({
      listeners: [{ name: 'ingress', kind: 'http', responseDelayMs: 800 }],
      drainStrategy: 'immediate',
      httpDrainTimeoutMs,
    });
    const port = standIn.listenerPort('ingress');
    const session = await h2(port);
    const idle = await h2(port);
    await vi.waitFor(() => expect(standIn.stat('http.ingress.downstream_cx_http2_active')).toBe(2));

    await post(standIn, '/drain_listeners?graceful');
    const first = session.request('/slow');
    const notice = await new Promise<{ lastStreamId: number; errorCode: number; time: number }>((resolve) => session.once('goaway', resolve));
    expect(notice).toMatchObject({ lastStreamId: MAX_STREAM_ID, errorCode: 0 });
    await first.done;
    // A stream opened after the notice is still served...
    const second = session.request('/after-notice');
    expect(second.streamId).toBe(3);
    // ...the final GOAWAY names it, drain_timeout after the notice...
    const final = await new Promise<{ lastStreamId: number; errorCode: number; time: number }>((resolve) => session.once('goaway', resolve));
    expect(final).toMatchObject({ lastStreamId: 3, errorCode: 0 });
    expect(final.time - notice.time).toBeGreaterThanOrEqual(httpDrainTimeoutMs - 50);
    // ...and the connection closes only once that stream has finished.
    let secondDoneAt = 0;
    void second.done.then(() => (secondDoneAt = Date.now()));
    const closedAt = await session.closed;
    expect(secondDoneAt).toBeGreaterThan(0);
    expect(closedAt).toBeGreaterThanOrEqual(secondDoneAt);

    expect(idle.goaways).toEqual([]);
    expect(idle.socket.destroyed).toBe(false);
    await vi.waitFor(() => expect(standIn.stat('http.ingress.downstream_cx_http2_active')).toBe(1));
  });

  it('HTTP/2: a session the client is already leaving gets no notice after its final GOAWAY (last-stream-id never rises)', async () => {
    const standIn = await start({ listeners: [{ name: 'ingress', kind: 'http', responseDelayMs: 200 }], drainStrategy: 'immediate' });
    const session = await h2(standIn.listenerPort('ingress'));
    await post(standIn, '/drain_listeners?graceful');
    const stream = session.request('/slow');
    session.goaway(); // the server closes the session and answers with its own GOAWAY (last id 1)...
    // ...then encodes the delayed response, which used to send the 2^31-1 notice: frames arrive in
    // order, so every GOAWAY sent before or with the response is in by the end of the stream.
    await stream.done;
    expect(session.goaways.length).toBeGreaterThan(0);
    const ids = session.goaways.map((g) => g.lastStreamId);
    expect(ids).toEqual([...ids].sort((a, b) => b - a)); // never increasing (RFC 9113 6.8)
    expect(ids.at(-1)).toBe(1);
  });

  it('without skip_exit the listen socket closes at the deadline; existing connections stay', async () => {
    const standIn = await start({ listeners: [{ name: 'ingress', kind: 'http' }], drainStrategy: 'immediate', drainTimeSeconds: 1 });
    const port = standIn.listenerPort('ingress');
    const idle = await h1(port);
    await post(standIn, '/drain_listeners?graceful');
    await h1(port);
    await vi.waitFor(() => refused(port), { timeout: 5_000, interval: 50 });
    expect(Date.now() - (standIn.drainStartedAt ?? 0)).toBeGreaterThanOrEqual(950);
    expect(idle.isClosed).toBe(false);
    expect(standIn.stat('listener_manager.listener_stopped')).toBe(1);
    // Envoy does not exit because of /drain_listeners.
    expect(await adminRequest(standIn.adminAddress, 'GET', '/ready')).toMatchObject({ status: 200, body: 'LIVE\n' });
  });

  it('with skip_exit nothing happens at the deadline; a second call changes nothing', async () => {
    const standIn = await start({ listeners: [{ name: 'ingress', kind: 'http' }], drainStrategy: 'immediate', drainTimeSeconds: 1 });
    const port = standIn.listenerPort('ingress');
    await post(standIn, '/drain_listeners?graceful&skip_exit');
    const startedAt = standIn.drainStartedAt;
    expect(await post(standIn, '/drain_listeners?graceful')).toMatchObject({ status: 200, body: 'OK\n' });
    expect(standIn.drainStartedAt).toBe(startedAt);
    await vi.waitFor(() => expect(Date.now() - (startedAt ?? 0)).toBeGreaterThan(1_300), { timeout: 5_000, interval: 50 });
    const late = await h1(port);
    expect((await late.request('GET', '/')).headers['connection']).toBe('close');
  });
});

describe('graceful drain, gradual strategy', () => {
  it('keeps connections open in the first second, closes them later, then stops listening', async () => {
    const standIn = await start({ listeners: [{ name: 'ingress', kind: 'http' }], drainTimeSeconds: 1 });
    const port = standIn.listenerPort('ingress');
    const client = await h1(port);
    await post(standIn, '/drain_listeners?graceful');
    // Zero whole seconds elapsed is never more than rand % 1.
    expect((await client.request('GET', '/')).headers['connection']).toBe('keep-alive');
    await vi.waitFor(() => expect(Date.now() - (standIn.drainStartedAt ?? 0)).toBeGreaterThanOrEqual(1_000), { timeout: 5_000, interval: 20 });
    expect((await client.request('GET', '/')).headers['connection']).toBe('close');
    await client.closed;
    await vi.waitFor(() => refused(port), { timeout: 5_000, interval: 50 });
  });
});
