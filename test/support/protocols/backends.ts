// The applications behind the protocol tests' Envoy, all on loopback: an HTTP/1.1 server (`/hold`
// waits until the test releases it, WebSocket upgrades are echoed, anything else answers 200), an
// h2c gRPC server (server-streaming calls the test feeds), a TCP echo server and a TLS echo server
// (the passthrough's end). Each tells the test what it holds, so tests wait on events, not time.
import { EventEmitter, once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer as createHttpServer, type Server as HttpServer, type ServerResponse } from 'node:http';
import http2 from 'node:http2';
import { type AddressInfo, createServer as createTcpServer, type Server, type Socket } from 'node:net';
import { createServer as createTlsServer } from 'node:tls';
import type { Certificate } from './certs.js';
import { answerGrpc, GRPC_PATH, type GrpcCall } from './grpc.js';
import { acceptWebSocket } from './websocket.js';

export interface Backends {
  readonly httpPort: number;
  readonly grpcPort: number;
  readonly tcpPort: number;
  readonly tlsPort: number;
  /** Resolves once `count` /hold requests are being held. */
  held(count: number): Promise<void>;
  /** Answers every held /hold request with 200. */
  releaseHeld(): void;
  /** Resolves with the next gRPC call once it has started. */
  nextGrpcCall(): Promise<GrpcCall>;
  close(): Promise<void>;
}

export async function startBackends(tlsCertificate: Certificate): Promise<Backends> {
  const changed = new EventEmitter();
  const heldResponses: ServerResponse[] = [];
  const sockets = new Set<Socket>();
  const track = (socket: Socket): void => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  };

  const http = createHttpServer((req, res) => {
    req.resume();
    if (req.url === '/hold') {
      heldResponses.push(res);
      changed.emit('held');
      return;
    }
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '3' }).end('ok\n');
  });
  http.keepAliveTimeout = 120_000;
  http.on('upgrade', (req, socket) => acceptWebSocket(req, socket));
  http.on('connection', track);

  const calls: GrpcCall[] = [];
  const grpc = http2.createServer();
  grpc.on('stream', (stream, headers) => {
    if (headers[':path'] !== GRPC_PATH) return void stream.respond({ ':status': 404 }, { endStream: true });
    answerGrpc(stream, (call) => {
      calls.push(call);
      changed.emit('grpc');
    });
  });
  grpc.on('connection', track);

  const echo = (socket: Socket): void => {
    socket.on('error', () => socket.destroy());
    socket.pipe(socket);
  };
  const tcp = createTcpServer(echo);
  tcp.on('connection', track);
  const tls = createTlsServer({ cert: readFileSync(tlsCertificate.certPath), key: readFileSync(tlsCertificate.keyPath) }, echo);
  tls.on('connection', track);

  const servers: Server[] = [http, grpc, tcp, tls];
  const [httpPort, grpcPort, tcpPort, tlsPort] = await Promise.all(servers.map(listen));
  return {
    httpPort: httpPort as number,
    grpcPort: grpcPort as number,
    tcpPort: tcpPort as number,
    tlsPort: tlsPort as number,
    held: (count) => until(changed, 'held', () => heldResponses.length >= count),
    releaseHeld() {
      for (const res of heldResponses.splice(0)) res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '5' }).end('done\n');
    },
    async nextGrpcCall() {
      await until(changed, 'grpc', () => calls.length > 0);
      return calls.shift() as GrpcCall;
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
    },
  };
}

function listen(server: Server | HttpServer): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: '127.0.0.1', port: 0 }, () => resolve((server.address() as AddressInfo).port));
  });
}

async function until(emitter: EventEmitter, event: string, holds: () => boolean): Promise<void> {
  while (!holds()) await once(emitter, event);
}
