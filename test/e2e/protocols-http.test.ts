// Every HTTP protocol on one listener (`listener_0`, whose stats are named by its address) behind a
// connection manager of another name (`ingress_http`), on real Envoy with real clients: what Envoy
// counts, what it does to the connection when drained, and what our drain makes of it. The protocol
// table of docs/reference.md (section "Idle connections") is these tests' findings.
import { afterEach, describe, expect, it } from 'vitest';
import { busyHttp1, http2Connection, idleHttp1 } from '../support/protocols/clients.js';
import { IDLE_DRAIN_BOUND_MS, pastQuietPeriod, startShutdown } from '../support/protocols/drain-run.js';
import { startGrpcStream } from '../support/protocols/grpc.js';
import { drainIdle } from '../support/protocols/idle-rows.js';
import { type ProtocolsEnvoy, startProtocolsEnvoy } from '../support/protocols/protocols-envoy.js';
import { openWebSocket } from '../support/protocols/websocket.js';

const cleanups: Array<() => unknown> = [];
const defer = (cleanup: () => unknown): void => void cleanups.push(cleanup);
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const LISTENER = 'listener.127.0.0.1_0.downstream_cx_active';
const HCM_CX = 'http.ingress_http.downstream_cx_active';
const HCM_RQ = 'http.ingress_http.downstream_rq_active';
/** HTTP/2's "no stream limit" last-stream-id in a first, graceful GOAWAY. */
const GOAWAY_ALL_STREAMS = 2 ** 31 - 1;

/** Waits until the listener and its connection manager count `cx` connections with `rq` requests in flight. */
async function counted(envoy: ProtocolsEnvoy, cx: number, rq: number): Promise<void> {
  const gauges = await envoy.waitForGauges(`${cx} connections, ${rq} in flight`, (g) => g.get(LISTENER) === cx && g.get(HCM_CX) === cx && g.get(HCM_RQ) === rq);
  expect([gauges.get(LISTENER), gauges.get(HCM_CX), gauges.get(HCM_RQ)]).toEqual([cx, cx, rq]);
}

describe('HTTP on real Envoy, listener and connection manager named apart', () => {
  it('HTTP/1.1 keep-alive, busy: a long request holds the drain and is answered in full with Connection: close', async () => {
    const envoy = await startProtocolsEnvoy(defer);
    const busy = busyHttp1(envoy.ports.http);
    await envoy.backends.upstream.slowInFlight(1);
    await counted(envoy, 1, 1);

    const cli = startShutdown(envoy, defer);
    await pastQuietPeriod(cli);
    expect(busy.closed()).toBe(false);
    expect(cli.exited()).toBe(false);

    const releasedAt = Date.now();
    envoy.backends.upstream.release();
    expect(await busy.answer).toEqual({ status: 200, connection: 'close' });
    await busy.whenClosed; // Envoy closes it after the answer
    const result = await cli.result;
    expect(result.code).toBe(0);
    expect(result.exitedAt).toBeGreaterThanOrEqual(releasedAt);
  });

  it('HTTP/1.1 keep-alive, idle: counted with no request in flight; Envoy sends nothing at the drain and closes it only when it exits', async () => {
    const envoy = await startProtocolsEnvoy(defer);
    const idle = await idleHttp1(envoy.ports.http);
    expect(idle.first).toEqual({ status: 200, connection: undefined });
    await counted(envoy, 1, 0);

    await drainIdle(envoy, defer, { kind: 'http1', port: envoy.ports.http });
    expect(idle.closed()).toBe(false);

    await envoy.target.envoy.stop();
    await idle.whenClosed;
  });

  it('HTTP/2, busy: a stream in flight holds the drain; GOAWAY (NO_ERROR, all streams) comes with its response, not at the drain', async () => {
    const envoy = await startProtocolsEnvoy(defer);
    const h2 = await http2Connection(envoy.ports.http);
    defer(() => h2.close());
    const answer = h2.get('/held');
    await envoy.backends.upstream.slowInFlight(1);
    await counted(envoy, 1, 1);

    const cli = startShutdown(envoy, defer);
    await pastQuietPeriod(cli);
    expect(h2.goaways).toEqual([]);
    expect(cli.exited()).toBe(false);

    const releasedAt = Date.now();
    envoy.backends.upstream.release();
    expect((await answer).status).toBe(200);
    expect(h2.goaways).toEqual([{ code: 0, lastStreamId: GOAWAY_ALL_STREAMS, at: expect.any(Number) as number }]);
    expect(h2.goaways[0]?.at).toBeGreaterThanOrEqual(releasedAt);
    await h2.whenClosed; // a client closes a session that said GOAWAY once its streams are done
    const result = await cli.result;
    expect(result.code).toBe(0);
    expect(result.exitedAt).toBeGreaterThanOrEqual(releasedAt);
  });

  it('HTTP/2, idle: counted with no stream; Envoy sends no GOAWAY at the drain and closes it only when it exits', async () => {
    const envoy = await startProtocolsEnvoy(defer);
    const h2 = await http2Connection(envoy.ports.http);
    defer(() => h2.close());
    expect((await h2.get('/')).status).toBe(200);
    await counted(envoy, 1, 0);

    await drainIdle(envoy, defer, { kind: 'http2', port: envoy.ports.http });
    expect(h2.goaways).toEqual([]);
    expect(h2.closed()).toBe(false);

    await envoy.target.envoy.stop();
    await h2.whenClosed;
    expect(h2.goaways).toEqual([]); // cut at the exit, with no GOAWAY
  });

  it('WebSocket: the upgraded connection counts as a request in flight, holds the drain, and carries messages until the client closes it', async () => {
    const envoy = await startProtocolsEnvoy(defer);
    const ws = await openWebSocket(envoy.ports.http);
    defer(() => ws.socket.destroy());
    expect(await ws.echo('before')).toBe('before');
    await counted(envoy, 1, 1);

    const cli = startShutdown(envoy, defer);
    await pastQuietPeriod(cli);
    expect(await ws.echo('during the drain')).toBe('during the drain');
    expect(cli.exited()).toBe(false);

    const closedAt = Date.now();
    await ws.close();
    expect(await ws.ended).toEqual({ closeFrame: true });
    const result = await cli.result;
    expect(result.code).toBe(0);
    expect(result.exitedAt).toBeGreaterThanOrEqual(closedAt);
  });

  it('gRPC server streaming: the call holds the drain, gets no GOAWAY while it runs, and ends with grpc-status 0; the channel left idle does not hold the drain', async () => {
    const envoy = await startProtocolsEnvoy(defer);
    const grpc = await startGrpcStream(envoy.ports.http);
    defer(() => grpc.close());
    const call = await envoy.backends.nextGrpcCall();
    call.send('first');
    expect(await grpc.next()).toBe('first');
    await counted(envoy, 1, 1);

    const cli = startShutdown(envoy, defer);
    await pastQuietPeriod(cli);
    call.send('during the drain');
    expect(await grpc.next()).toBe('during the drain');
    expect(grpc.goaways).toEqual([]);
    expect(cli.exited()).toBe(false);

    const finishedAt = Date.now();
    call.finish();
    expect(await grpc.status).toBe('0');
    expect(grpc.goaways).toEqual([]);
    // The channel stays open, as a gRPC client keeps it: idle now, it no longer holds the drain.
    const result = await cli.result;
    expect(result.code).toBe(0);
    expect(result.exitedAt).toBeGreaterThanOrEqual(finishedAt);
    expect(result.exitedAt - finishedAt).toBeLessThan(IDLE_DRAIN_BOUND_MS);
    expect(grpc.session.closed).toBe(false);
  });
});
