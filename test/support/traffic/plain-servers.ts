// Bare HTTP/1.1 and h2c servers that misbehave on purpose (5xx, short bodies, silence), to prove
// the traffic stand-in records each kind of failure. Not Envoy: no drain, no stats.
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import http2, { type ServerHttp2Session, type ServerHttp2Stream } from 'node:http2';
import type { AddressInfo, Server } from 'node:net';
import type { Endpoint } from './load-balancer.js';

export interface PlainServer {
  readonly endpoint: Endpoint;
  /** Drops every connection and the listen socket. */
  close(): Promise<void>;
}

export async function startPlainHttp1(onRequest: (req: IncomingMessage, res: ServerResponse) => void): Promise<PlainServer> {
  const server = http.createServer(onRequest);
  const endpoint = await listen(server);
  return {
    endpoint,
    close: () => {
      server.closeAllConnections();
      return closeServer(server);
    },
  };
}

export async function startPlainH2c(onStream: (stream: ServerHttp2Stream) => void): Promise<PlainServer> {
  const server = http2.createServer();
  const sessions = new Set<ServerHttp2Session>();
  server.on('session', (session) => {
    sessions.add(session);
    session.on('error', () => {});
    session.once('close', () => sessions.delete(session));
  });
  server.on('stream', (stream) => {
    stream.on('error', () => {});
    onStream(stream);
  });
  const endpoint = await listen(server);
  return {
    endpoint,
    close: () => {
      for (const session of sessions) session.destroy();
      return closeServer(server);
    },
  };
}

function listen(server: Server): Promise<Endpoint> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: '127.0.0.1', port: 0 }, () => {
      server.off('error', reject);
      resolve({ host: '127.0.0.1', port: (server.address() as AddressInfo).port });
    });
  });
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}
