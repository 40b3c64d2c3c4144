// The one backend behind every Envoy that serves more than HTTP (the protocol tests' and the peer
// fixtures', whose clusters all point at one loopback port): it looks at a connection's first bytes
// and hands it to the HTTP/1.1 upstream (`/slow/<ms>`, `/held`, WebSocket upgrades echoed), an h2c
// gRPC server, a TLS echo server (TLS passthrough ends here) or a TCP echo server (a TCPRoute's
// stream). Each part tells the test what it holds, so tests wait on events, not time.
import { EventEmitter, once } from 'node:events';
import { readFileSync } from 'node:fs';
import http2, { type ServerHttp2Stream } from 'node:http2';
import { type AddressInfo, connect, createServer, type Server, type Socket } from 'node:net';
import { createServer as createTlsServer } from 'node:tls';
import { startUpstream, type Upstream } from '../real-envoy/upstream.js';
import { answerGrpc, GRPC_PATH, GRPC_STREAM_PATH, GRPC_UNARY_PATH, type GrpcCall, grpcMessage, grpcReader } from './grpc.js';

/** The streaming Greeter call's replies: one this often, this many at most. */
const GRPC_STREAM_EVERY_MS = 100;
const GRPC_STREAM_MAX = 900;

export interface Backends {
  readonly port: number;
  /** The HTTP/1.1 application: its `/held` requests wait for upstream.release(). */
  readonly upstream: Upstream;
  /** Resolves with the next GRPC_PATH call once it has started: the test feeds it. */
  nextGrpcCall(): Promise<GrpcCall>;
  close(): Promise<void>;
}

const HTTP2_PREFACE = 'PRI * HTTP/2.0';
const TLS_HANDSHAKE = 0x16;

/** The TLS echo server presents the certificate at `certPath`, `keyPath`. */
export async function startBackends(certPath: string, keyPath: string): Promise<Backends> {
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
  const calls: GrpcCall[] = [];
  const called = new EventEmitter();
  const grpc = http2.createServer();
  grpc.on('stream', (stream, headers) => {
    if (headers[':path'] !== GRPC_PATH) return answerGreeter(stream, headers[':path']);
    answerGrpc(stream, (call) => {
      calls.push(call);
      called.emit('call');
    });
  });
  grpc.on('connection', track);
  const tcp = createServer(echo).on('connection', track);
  const tls = createTlsServer({ cert: readFileSync(certPath), key: readFileSync(keyPath) }, echo).on('connection', track);
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
    async nextGrpcCall() {
      while (calls.length === 0) await once(called, 'call');
      return calls.shift() as GrpcCall;
    },
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
function answerGreeter(stream: ServerHttp2Stream, path: string | undefined): void {
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
