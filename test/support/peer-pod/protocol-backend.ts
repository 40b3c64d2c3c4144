// The one backend every cluster of a peer fixture points at (the fixtures move all endpoints to
// one loopback port), serving each listener's own protocol: it looks at a connection's first
// bytes and hands it to an HTTP/1.1 application (`/slow/<ms>` long requests), an h2c gRPC server
// (a GRPCRoute's cluster speaks HTTP/2), a TLS echo server (TLS passthrough ends here) or a TCP
// echo server (a TCPRoute's stream).

import { readFileSync } from 'node:fs';
import http2, { type ServerHttp2Stream } from 'node:http2';
import { type AddressInfo, connect, createServer, type Server, type Socket } from 'node:net';
import { createServer as createTlsServer } from 'node:tls';
import type { TestCertificate } from '../peer-fixtures/certificate.js';
import { grpcMessage, grpcReader } from '../protocols/grpc.js';
import { startUpstream, type Upstream } from '../real-envoy/upstream.js';

/** The gRPC service the Envoy Gateway fixture routes (`pathSeparatedPrefix: /helloworld.Greeter`). */
export const GRPC_UNARY_PATH = '/helloworld.Greeter/SayHello';
export const GRPC_STREAM_PATH = '/helloworld.Greeter/SayHelloStream';
/** The streaming call's replies: one this often, this many at most. */
export const GRPC_STREAM_EVERY_MS = 100;
const GRPC_STREAM_MAX = 900;

export interface ProtocolBackend {
  readonly port: number;
  readonly upstream: Upstream;
  close(): Promise<void>;
}

const HTTP2_PREFACE = 'PRI * HTTP/2.0';
const TLS_HANDSHAKE = 0x16;

export async function startProtocolBackend(certificate: TestCertificate): Promise<ProtocolBackend> {
  const upstream = await startUpstream();
  const sockets = new Set<Socket>();
  const track = (socket: Socket): void => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  };
  const echo = (socket: Socket): void => {
    socket.on('error', () => socket.destroy());
    socket.pipe(socket);
  };
  const grpc = http2.createServer();
  grpc.on('stream', answerGreeter);
  grpc.on('connection', track);
  const tcp = createServer(echo).on('connection', track);
  const tls = createTlsServer({ cert: readFileSync(certificate.certFile), key: readFileSync(certificate.keyFile) }, echo).on('connection', track);
  const [grpcPort, tcpPort, tlsPort] = await Promise.all([grpc, tcp, tls].map(listen));
  const front = createServer((socket) => {
    track(socket);
    socket.on('error', () => socket.destroy());
    socket.once('data', (first: Buffer) => {
      const port =
        first[0] === TLS_HANDSHAKE
          ? tlsPort
          : first.toString('latin1', 0, HTTP2_PREFACE.length) === HTTP2_PREFACE
            ? grpcPort
            : /^[A-Z]+ \//.test(first.toString('latin1', 0, 16))
              ? upstream.port
              : tcpPort;
      const inner = connect({ host: '127.0.0.1', port: port as number });
      track(inner);
      inner.on('error', () => socket.destroy());
      socket.on('close', () => inner.destroy());
      inner.on('close', () => socket.destroy());
      inner.write(first);
      socket.pipe(inner);
      inner.pipe(socket);
    });
  });
  const port = await listen(front);
  const servers: Server[] = [front, grpc, tcp, tls];
  return {
    port,
    upstream,
    async close() {
      for (const socket of sockets) socket.destroy();
      await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
      await upstream.close();
    },
  };
}

/**
 * Unary: one reply. Streaming: a reply every GRPC_STREAM_EVERY_MS for as long as the client's side
 * is open (at most GRPC_STREAM_MAX replies), then grpc-status 0 once the client has ended its side.
 */
function answerGreeter(stream: ServerHttp2Stream, headers: http2.IncomingHttpHeaders): void {
  const path = headers[':path'];
  if (path !== GRPC_UNARY_PATH && path !== GRPC_STREAM_PATH) return void stream.respond({ ':status': 404 }, { endStream: true });
  stream.on('error', () => stream.destroy());
  stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
  stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
  let timer: NodeJS.Timeout | undefined;
  stream.on(
    'data',
    grpcReader((payload) => {
      if (path === GRPC_UNARY_PATH) return void stream.end(grpcMessage(`hello ${payload}`));
      let sent = 0;
      timer ??= setInterval(() => {
        if (stream.destroyed || sent >= GRPC_STREAM_MAX) return clearInterval(timer);
        sent += 1;
        stream.write(grpcMessage(`reply ${sent}`));
      }, GRPC_STREAM_EVERY_MS);
    }),
  );
  stream.on('end', () => {
    clearInterval(timer);
    if (path === GRPC_STREAM_PATH && !stream.destroyed) stream.end();
  });
  stream.on('close', () => clearInterval(timer));
}

function listen(server: Server): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: '127.0.0.1', port: 0 }, () => resolve((server.address() as AddressInfo).port));
  });
}
