// The protocol tests' clients of Envoy's listeners, on node's own HTTP/1.1, HTTP/2, TCP and TLS:
// each records what a user's client would see (a Connection header, a GOAWAY, the socket's close)
// as events the tests wait on.
import { once } from 'node:events';
import { Agent, request } from 'node:http';
import http2, { type ClientHttp2Session } from 'node:http2';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { connect, type Socket } from 'node:net';
import { type TLSSocket, connect as tlsConnect } from 'node:tls';

export interface Answer {
  readonly status: number;
  /** The response's Connection header: `close` once Envoy drains the connection. */
  readonly connection: string | undefined;
}

export interface Http1Connection {
  /** Resolves when the socket closes, whoever closed it. */
  readonly closed: Promise<void>;
  isOpen(): boolean;
  close(): Promise<void>;
}

function watchClose(socket: Socket): { closed: Promise<void>; isOpen: () => boolean } {
  let open = !socket.destroyed;
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  void closed.then(() => (open = false));
  return { closed, isOpen: () => open };
}

async function destroy(socket: Socket): Promise<void> {
  if (socket.destroyed) return;
  const closed = once(socket, 'close');
  socket.destroy();
  await closed;
}

/**
 * An HTTP/1.1 keep-alive connection left idle in its pool after one answered request; over TLS
 * with SNI `servername` when given (the test's own self-signed certificates: not checked).
 */
export async function idleHttp1(port: number, servername?: string): Promise<Http1Connection & { readonly first: Answer }> {
  const options = { keepAlive: true, maxSockets: 1 };
  const agent = servername === undefined ? new Agent(options) : new HttpsAgent({ ...options, servername, rejectUnauthorized: false });
  const send = servername === undefined ? request : httpsRequest;
  let socket: Socket | undefined;
  const first = await new Promise<Answer>((resolve, reject) => {
    const req = send({ host: '127.0.0.1', port, path: '/', agent }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection }));
    });
    req.on('socket', (s) => (socket = s));
    req.on('error', reject);
    req.end();
  });
  const held = socket as Socket;
  return {
    first,
    ...watchClose(held),
    close: async () => {
      await destroy(held);
      agent.destroy();
    },
  };
}

/** An HTTP/1.1 request that the backend holds (`/hold`) on a connection of its own: busy until the test releases it. */
export function busyHttp1(port: number): Http1Connection & { readonly answer: Promise<Answer> } {
  const req = request({ host: '127.0.0.1', port, path: '/hold', agent: false });
  const socket = new Promise<Socket>((resolve) => req.once('socket', resolve));
  const answer = new Promise<Answer>((resolve, reject) => {
    req.on('response', (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection }));
    });
    req.on('error', reject);
  });
  answer.catch(() => undefined);
  req.end();
  let open = true;
  const closed = socket.then((s) => once(s, 'close')).then(() => void (open = false));
  return { answer, closed, isOpen: () => open, close: async () => destroy(await socket) };
}

export interface Http2Connection {
  readonly session: ClientHttp2Session;
  /** GOAWAYs received, with Date.now() on arrival. */
  readonly goaways: ReadonlyArray<{ readonly code: number; readonly lastStreamId: number; readonly at: number }>;
  readonly closed: Promise<void>;
  isOpen(): boolean;
  /** One request on this session; resolves with the status once the body has ended. */
  get(path: string): Promise<{ status: number; at: number }>;
  close(): Promise<void>;
}

/** An HTTP/2 session over cleartext (prior knowledge, as gRPC and service meshes use it). */
export async function http2Connection(port: number): Promise<Http2Connection> {
  const session = http2.connect(`http://127.0.0.1:${port}`);
  const goaways: Array<{ code: number; lastStreamId: number; at: number }> = [];
  session.on('goaway', (code, lastStreamId) => goaways.push({ code, lastStreamId, at: Date.now() }));
  session.on('error', () => undefined);
  let open = true;
  const closed = new Promise<void>((resolve) => session.once('close', () => resolve()));
  void closed.then(() => (open = false));
  await once(session, 'connect');
  return {
    session,
    goaways,
    closed,
    isOpen: () => open,
    get: (path) =>
      new Promise((resolve, reject) => {
        const stream = session.request({ ':path': path });
        let status = 0;
        stream.on('response', (headers) => (status = Number(headers[':status'])));
        stream.on('end', () => resolve({ status, at: Date.now() }));
        stream.on('close', () => (stream.rstCode !== 0 ? reject(new Error(`stream reset: ${stream.rstCode}`)) : undefined));
        stream.on('error', reject);
        stream.resume();
        stream.end();
      }),
    async close() {
      if (session.destroyed) return;
      session.destroy();
      await closed;
    },
  };
}

export interface StreamConnection {
  readonly socket: Socket | TLSSocket;
  /** Writes `text` and resolves once the echo server's copy has come back through Envoy. */
  echo(text: string): Promise<void>;
  readonly closed: Promise<void>;
  isOpen(): boolean;
  close(): Promise<void>;
}

function echoing(socket: Socket | TLSSocket): StreamConnection {
  let received = '';
  const wakers = new Set<() => void>();
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => {
    received += chunk;
    for (const wake of wakers) wake();
  });
  socket.on('error', () => socket.destroy());
  const { closed, isOpen } = watchClose(socket);
  return {
    socket,
    closed,
    isOpen,
    echo: (text) =>
      new Promise((resolve, reject) => {
        const check = (): void => {
          if (!received.includes(text)) return;
          wakers.delete(check);
          resolve();
        };
        wakers.add(check);
        void closed.then(() => reject(new Error(`closed before the echo of ${text}`)));
        socket.write(text);
      }),
    close: () => destroy(socket),
  };
}

/** A raw TCP connection through a tcp_proxy listener to the echo server. */
export async function tcpStream(port: number): Promise<StreamConnection> {
  const socket = connect(port, '127.0.0.1');
  await once(socket, 'connect');
  return echoing(socket);
}

/** A TLS connection with SNI `servername`; resolves once the handshake (with whoever answers that name) is done. */
export async function tlsStream(port: number, servername: string, alpn?: string[]): Promise<StreamConnection & { readonly peerName: string | undefined }> {
  // The certificates are the test's own, self-signed: what is checked is who answered (the peer's name), not trust.
  const socket = tlsConnect({ host: '127.0.0.1', port, servername, rejectUnauthorized: false, ...(alpn === undefined ? {} : { ALPNProtocols: alpn }) });
  await once(socket, 'secureConnect');
  const subject = socket.getPeerCertificate().subject as { CN?: string } | undefined;
  return { ...echoing(socket), peerName: subject?.CN };
}
