// The protocols that are not HTTP on a TCP listener of their own: a TCP proxy, TLS passthrough
// (chosen by SNI beside a TLS-terminating HTTP chain on the same listener), and HTTP/3 over QUIC
// on a UDP listener; each named unlike its connection manager or tcp_proxy. Real Envoy, real
// clients (HTTP/3: aioquic); what Envoy counts, what it does at the drain, what our drain makes of it.
import { afterEach, describe, expect, it } from 'vitest';
import { SNI } from '../support/protocols/bootstrap.js';
import { idleHttp1, type StreamConnection, tcpStream, tlsStream } from '../support/protocols/clients.js';
import { pastQuietPeriod, startShutdown } from '../support/protocols/drain-run.js';
import { connectH3 } from '../support/protocols/h3.js';
import { drainIdle } from '../support/protocols/idle-rows.js';
import { type Gauges, type ProtocolsEnvoy, startProtocolsEnvoy } from '../support/protocols/protocols-envoy.js';

const cleanups: Array<() => unknown> = [];
const defer = (cleanup: () => unknown): void => void cleanups.push(cleanup);
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Waits until every named gauge has its value (a gauge Envoy does not report reads as undefined). */
async function counted(envoy: ProtocolsEnvoy, expected: Record<string, number | undefined>): Promise<void> {
  const pick = (g: Gauges): Record<string, number | undefined> => Object.fromEntries(Object.keys(expected).map((name) => [name, g.get(name)]));
  const gauges = await envoy.waitForGauges(JSON.stringify(expected), (g) => JSON.stringify(pick(g)) === JSON.stringify(expected));
  expect(pick(gauges)).toEqual(expected);
}

/** A TCP or TLS stream through tcp_proxy: counted by its listener alone, untouched by the drain, holding it until the client closes. */
async function streamHoldsTheDrain(envoy: ProtocolsEnvoy, stream: StreamConnection): Promise<void> {
  const cli = startShutdown(envoy, defer);
  await pastQuietPeriod(cli);
  await stream.echo('during the drain');
  expect(stream.closed()).toBe(false);
  expect(cli.exited()).toBe(false);

  const closedAt = Date.now();
  await stream.close();
  const result = await cli.result;
  expect(result.code).toBe(0);
  expect(result.exitedAt).toBeGreaterThanOrEqual(closedAt);
}

describe('TCP, TLS passthrough and HTTP/3 on real Envoy, listeners named apart from their filters', () => {
  it('TCP proxy: the connection holds the drain, is never closed by it, and carries data until the client closes it', async () => {
    const envoy = await startProtocolsEnvoy(defer);
    const tcp = await tcpStream(envoy.ports.tcp);
    defer(() => tcp.close());
    await tcp.echo('before');
    await counted(envoy, { 'listener.tcp_in.downstream_cx_active': 1 });
    await streamHoldsTheDrain(envoy, tcp);
  });

  it('TLS passthrough (SNI, tls_inspector, tcp_proxy): the backend terminates TLS; the connection holds the drain until the client closes it', async () => {
    const envoy = await startProtocolsEnvoy(defer);
    const tls = await tlsStream(envoy.ports.tls, SNI.passthrough);
    defer(() => tls.close());
    expect(tls.peerName).toBe(SNI.passthrough); // the backend's certificate: Envoy passed TLS through
    await tls.echo('before');
    await counted(envoy, { 'listener.tls_in.downstream_cx_active': 1, 'http.ingress_https.downstream_cx_active': 0 });
    await streamHoldsTheDrain(envoy, tls);
  });

  it('HTTPS terminated beside a passthrough chain, idle: counted by the listener and its connection manager with no request in flight; Envoy sends nothing at the drain', async () => {
    const envoy = await startProtocolsEnvoy(defer);
    const idle = await idleHttp1(envoy.ports.tls, '/', { servername: SNI.terminated });
    expect(idle.first).toEqual({ status: 200, connection: undefined });
    await counted(envoy, {
      'listener.tls_in.downstream_cx_active': 1,
      'http.ingress_https.downstream_cx_active': 1,
      'http.ingress_https.downstream_rq_active': 0,
    });

    await drainIdle(envoy, defer, { kind: 'http1', port: envoy.ports.tls, servername: SNI.terminated });
    expect(idle.closed()).toBe(false);

    await envoy.target.envoy.stop();
    await idle.whenClosed;
  });

  it('HTTP/3 over QUIC, idle: counted by the UDP listener and its connection manager with no request in flight; no GOAWAY until Envoy exits', async () => {
    const envoy = await startProtocolsEnvoy(defer);
    const h3 = await connectH3(envoy.ports.quic, SNI.quic);
    defer(() => h3.close());
    h3.get('/');
    await h3.waitFor((e) => e.event === 'body_end');
    await counted(envoy, { 'listener.quic_in.downstream_cx_active': 1, 'http.ingress_h3.downstream_cx_active': 1, 'http.ingress_h3.downstream_rq_active': 0 });

    await drainIdle(envoy, defer, { kind: 'http3', port: envoy.ports.quic, servername: SNI.quic });
    expect(h3.events.filter((e) => e.event === 'goaway' || e.event === 'closed')).toEqual([]);

    const stoppedAt = Date.now();
    await envoy.target.envoy.stop();
    // At its exit Envoy says GOAWAY, then closes the QUIC connection.
    const goaway = await h3.waitFor((e) => e.event === 'goaway');
    const closed = await h3.waitFor((e) => e.event === 'closed');
    expect(goaway.at).toBeGreaterThanOrEqual(stoppedAt);
    expect(closed.reason).toMatch(/shutdown/i);
  });

  it('HTTP/3 over QUIC, busy: a request in flight holds the drain; GOAWAY comes with its response, and Envoy closes the connection after its drain timeout', async () => {
    const envoy = await startProtocolsEnvoy(defer);
    const h3 = await connectH3(envoy.ports.quic, SNI.quic);
    defer(() => h3.close());
    h3.get('/held');
    await envoy.backends.upstream.slowInFlight(1);
    await counted(envoy, { 'listener.quic_in.downstream_cx_active': 1, 'http.ingress_h3.downstream_cx_active': 1, 'http.ingress_h3.downstream_rq_active': 1 });

    const cli = startShutdown(envoy, defer);
    await pastQuietPeriod(cli);
    expect(h3.events.filter((e) => e.event === 'goaway' || e.event === 'closed')).toEqual([]);
    expect(cli.exited()).toBe(false);

    const releasedAt = Date.now();
    envoy.backends.upstream.release();
    const response = await h3.waitFor((e) => e.event === 'response');
    expect(response.status).toBe(200);
    const goaway = await h3.waitFor((e) => e.event === 'goaway');
    expect(goaway.at).toBeGreaterThanOrEqual(releasedAt);
    await h3.waitFor((e) => e.event === 'body_end');
    const closed = await h3.waitFor((e) => e.event === 'closed');
    expect(closed.error_code).toBe(0);
    const result = await cli.result;
    expect(result.code).toBe(0);
    expect(result.exitedAt).toBeGreaterThanOrEqual(releasedAt);
  });
});
