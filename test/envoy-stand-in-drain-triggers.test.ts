// What else drains or ends connections besides a graceful /drain_listeners: health check failure
// (per drain_type), non-graceful and inbound-only drains, the health check filter, idle timeout, kill.
import { describe, expect, it, vi } from 'vitest';
import { standInHarness } from './support/envoy/harness.js';
import { MAX_STREAM_ID } from './support/envoy/http2-drain.js';
import { adminRequest, RawHttp1Client } from './support/envoy/http1-client.js';
import type { EnvoyStandIn } from './support/envoy/stand-in.js';

const { start, h1, h2, tcp } = standInHarness();
const post = (standIn: EnvoyStandIn, target: string): Promise<unknown> => adminRequest(standIn.adminAddress, 'POST', target);
const refused = (port: number): Promise<unknown> => expect(RawHttp1Client.connect(port)).rejects.toMatchObject({ code: 'ECONNREFUSED' });

describe('what else drains, and what does not', () => {
  it('/healthcheck/fail drains DEFAULT listeners at once, not MODIFY_ONLY ones; /healthcheck/ok does not undo it', async () => {
    const standIn = await start({
      listeners: [
        { name: 'default', kind: 'http' },
        { name: 'modify', kind: 'http', drainType: 'MODIFY_ONLY' },
      ],
      httpDrainTimeoutMs: 1_000,
    });
    const modify = await h1(standIn.listenerPort('modify'));
    const session = await h2(standIn.listenerPort('default'));
    await session.request('/').done;
    await post(standIn, '/healthcheck/fail');

    const drained = await h1(standIn.listenerPort('default'));
    expect((await drained.request('GET', '/')).headers['connection']).toBe('close');
    expect((await modify.request('GET', '/')).headers['connection']).toBe('keep-alive');
    await session.request('/').done;
    expect(session.goaways).toMatchObject([{ lastStreamId: MAX_STREAM_ID }]);

    await post(standIn, '/healthcheck/ok');
    await session.request('/').done;
    await session.closed;
    // Node may repeat the final GOAWAY; every one after the notice names the last stream.
    const [notice, ...finals] = session.goaways.map((goaway) => goaway.lastStreamId);
    expect(notice).toBe(MAX_STREAM_ID);
    expect(finals.length).toBeGreaterThan(0);
    for (const last of finals) expect(last).toBe(5);
    const fresh = await h1(standIn.listenerPort('default'));
    expect((await fresh.request('GET', '/')).headers['connection']).toBe('keep-alive');
    expect(modify.isClosed).toBe(false);
  });

  it('without graceful, listeners stop at once and connections are never told to drain', async () => {
    const standIn = await start({ listeners: [{ name: 'ingress', kind: 'http' }], drainStrategy: 'immediate' });
    const port = standIn.listenerPort('ingress');
    const client = await h1(port);
    await post(standIn, '/drain_listeners');
    await refused(port);
    expect((await client.request('GET', '/')).headers['connection']).toBe('keep-alive');
    expect(standIn.drainStartedAt).toBeUndefined();
  });

  it('inboundonly drains and stops INBOUND listeners only', async () => {
    const standIn = await start({
      listeners: [
        { name: 'in', kind: 'http', trafficDirection: 'INBOUND' },
        { name: 'out', kind: 'http', trafficDirection: 'OUTBOUND' },
        { name: 'other', kind: 'http' },
      ],
      drainStrategy: 'immediate',
    });
    await post(standIn, '/drain_listeners?inboundonly&graceful');
    const inbound = await h1(standIn.listenerPort('in'));
    const outbound = await h1(standIn.listenerPort('out'));
    const other = await h1(standIn.listenerPort('other'));
    expect((await inbound.request('GET', '/')).headers['connection']).toBe('close');
    expect((await outbound.request('GET', '/')).headers['connection']).toBe('keep-alive');
    expect((await other.request('GET', '/')).headers['connection']).toBe('keep-alive');

    await post(standIn, '/drain_listeners?inboundonly');
    await refused(standIn.listenerPort('in'));
    await h1(standIn.listenerPort('out'));
  });

  it('the health check filter: 200, then 503 with an empty body, and the fail header on other responses', async () => {
    const standIn = await start({ listeners: [{ name: 'ingress', kind: 'http', healthCheckPath: '/healthz', drainType: 'MODIFY_ONLY' }] });
    const client = await h1(standIn.listenerPort('ingress'));
    expect(await client.request('GET', '/healthz')).toMatchObject({ status: 200, body: '' });
    const before = await client.request('GET', '/app');
    expect(before.headers['x-envoy-immediate-health-check-fail']).toBeUndefined();
    await post(standIn, '/healthcheck/fail');
    const check = await client.request('GET', '/healthz');
    expect(check).toMatchObject({ status: 503, body: '' });
    expect(check.headers['x-envoy-immediate-health-check-fail']).toBeUndefined();
    const app = await client.request('GET', '/app');
    expect(app.status).toBe(200);
    expect(app.headers['x-envoy-immediate-health-check-fail']).toBe('true');
    await post(standIn, '/healthcheck/ok');
    expect(await client.request('GET', '/healthz')).toMatchObject({ status: 200 });
    expect(standIn.stat('http.ingress.downstream_rq_5xx')).toBe(1);
  });
});

describe('idle timeout', () => {
  it('ends idle HTTP/1.1, HTTP/2 and silent connections at idleTimeoutMs', async () => {
    const standIn = await start({ listeners: [{ name: 'ingress', kind: 'http' }], idleTimeoutMs: 300 });
    const port = standIn.listenerPort('ingress');
    const openedAt = Date.now();
    const keepAlive = await h1(port);
    await keepAlive.request('GET', '/');
    const session = await h2(port);
    await session.request('/').done;
    const silent = await h1(port);
    await Promise.all([keepAlive.closed, session.closed, silent.closed]);
    expect(Date.now() - openedAt).toBeGreaterThanOrEqual(250);
    // HTTP/2 says goodbye properly before closing.
    expect(session.goaways.length).toBeGreaterThan(0);
    for (const goaway of session.goaways) expect(goaway).toMatchObject({ lastStreamId: 1, errorCode: 0 });
    expect(standIn.stat('http.ingress.downstream_cx_idle_timeout')).toBe(3);
    await vi.waitFor(() => expect(standIn.stat('listener.ingress.downstream_cx_active')).toBe(0));
  });

  it('a request in flight is not idle, on either protocol', async () => {
    const standIn = await start({ listeners: [{ name: 'slow', kind: 'http', responseDelayMs: 500 }], idleTimeoutMs: 200 });
    const client = await h1(standIn.listenerPort('slow'));
    const session = await h2(standIn.listenerPort('slow'));
    const stream = session.request('/');
    expect((await client.request('GET', '/')).status).toBe(200);
    await stream.done;
    expect(session.goaways).toEqual([]);
    await Promise.all([client.closed, session.closed]);
  });
});

describe('kill()', () => {
  it('drops every connection abruptly, in-flight requests included, and refuses new ones', async () => {
    const standIn = await start({
      listeners: [{ name: 'ingress', kind: 'http', responseDelayMs: 10_000 }, { name: 'db', kind: 'tcp' }],
    });
    const port = standIn.listenerPort('ingress');
    const client = await h1(port);
    const inFlight = client.request('GET', '/slow');
    const echo = await tcp(standIn.listenerPort('db'));
    const echoClosed = new Promise((resolve) => echo.once('close', resolve));
    await vi.waitFor(() => expect(standIn.stat('http.ingress.downstream_rq_active')).toBe(1));
    await standIn.kill();
    await expect(inFlight).rejects.toThrow('connection closed before a response');
    await echoClosed;
    await refused(port);
    await expect(adminRequest(standIn.adminAddress, 'GET', '/ready')).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    await standIn.close();
  });
});
