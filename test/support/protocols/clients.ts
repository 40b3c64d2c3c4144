// The one client per protocol that tests, the demo and bench use against listeners on loopback:
// HTTP/1.1 (clear, or TLS with SNI), HTTP/2 (h2c), TCP and TLS streams; HTTP/3, gRPC and WebSocket
// have their own files. A request never throws: it ends in a verdict (failures.ts), so a load
// counts what a user's client would see. A connection says when it closed, whoever closed it, so
// tests wait on that event.
import { once } from 'node:events';
import { Agent, type ClientRequest, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import http2, { type ClientHttp2Session, type ClientHttp2Stream } from 'node:http2';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { connect, type Socket } from 'node:net';
import { type TLSSocket, connect as tlsConnect } from 'node:tls';
import { checkResponse, classifyError, describeError, type Protocol, parseContentLength, type Verdict } from './failures.js';

/** Bounds a request that names no bound of its own. */
export const REQUEST_TIMEOUT_MS = 10_000;
/** Bounds a request the backend holds until the test releases it. */
const HELD_TIMEOUT_MS = 60_000;

/** How a request ended: the answer's parts (status 0 without one) and its verdict. */
export interface Answer {
  readonly status: number;
  /** HTTP/1.1's Connection header: `close` once Envoy drains the connection. */
  readonly connection: string | undefined;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  /** Date.now() when it ended. */
  readonly at: number;
  readonly failure: Verdict;
}

/** A connection a test holds open. */
export interface Connection {
  readonly protocol: Protocol | 'stream';
  /** True once it closed (or, for HTTP/2, began to close). */
  closed(): boolean;
  /** Resolves when it has closed, whoever closed it. */
  readonly whenClosed: Promise<void>;
  close(): Promise<void>;
}

function closeEvent(emitter: Socket | ClientHttp2Session): Promise<void> {
  return emitter.destroyed ? Promise.resolve() : new Promise((resolve) => emitter.once('close', () => resolve()));
}

/** Waits for `event` (a connect, a handshake) for REQUEST_TIMEOUT_MS at most, then fails the connection. */
async function opened(emitter: Socket | ClientHttp2Session, event: string): Promise<void> {
  const timer = setTimeout(() => emitter.destroy(new Error(`no ${event} within ${REQUEST_TIMEOUT_MS} ms`)), REQUEST_TIMEOUT_MS);
  try {
    await once(emitter, event);
  } finally {
    clearTimeout(timer);
  }
}

async function destroy(emitter: Socket | ClientHttp2Session): Promise<void> {
  const closed = closeEvent(emitter);
  emitter.destroy();
  await closed;
}

/** A transport failure (no answer, or a cut one) as an error; an answer of any status is fine. */
function answered<T extends Answer>(answer: T, what: string): T {
  if (answer.failure !== undefined && answer.failure.kind !== 'status') throw new Error(`${what}: ${answer.failure.kind}: ${answer.failure.detail}`);
  return answer;
}

export interface Http1Request {
  readonly port?: number;
  /** Where to connect (default 127.0.0.1); an agent may connect elsewhere. */
  readonly host?: string;
  /** A Unix socket instead of host and port. */
  readonly socketPath?: string;
  readonly method?: string;
  readonly path?: string;
  readonly body?: string;
  readonly signal?: AbortSignal;
  readonly headers?: Readonly<Record<string, string>>;
  /** TLS with this SNI (the tests' own certificates: not checked); clear text without. */
  readonly servername?: string;
  /** A keep-alive pool; false (the default): a connection of its own. */
  readonly agent?: Agent | false;
  readonly timeoutMs?: number;
  /** Sees the socket the request goes out on. */
  readonly onSocket?: (socket: Socket) => void;
}

/** One HTTP/1.1 request, bounded by its timeout; a response cut short is 'truncated', a non-2xx one 'status'. */
export function http1Request(options: Http1Request): Promise<Answer & { readonly socket: Socket | undefined }> {
  const timeoutMs = options.timeoutMs ?? REQUEST_TIMEOUT_MS;
  return new Promise((resolve) => {
    let socket: Socket | undefined;
    let status = 0;
    let headers: IncomingHttpHeaders = {};
    let body = '';
    // The first call settles the promise; later ones (the destroy after a timeout) change nothing.
    const finish = (failure: Verdict): void => {
      clearTimeout(timer);
      resolve({ status, connection: headers.connection, headers, body, at: Date.now(), failure, socket });
    };
    const timer = setTimeout(() => {
      finish({ kind: 'timeout', detail: `no complete response within ${timeoutMs} ms` });
      // The socket may still deliver the late answer: it must not carry another request.
      req.destroy();
    }, timeoutMs);
    const send = options.servername === undefined ? httpRequest : httpsRequest;
    const { servername, socketPath, port, signal } = options;
    const req: ClientRequest = send({
      ...(socketPath === undefined ? { host: options.host ?? '127.0.0.1', port } : { socketPath }),
      method: options.method ?? 'GET',
      path: options.path ?? '/',
      agent: options.agent ?? false,
      headers: options.headers ?? {},
      ...(servername === undefined ? {} : { servername, rejectUnauthorized: false }),
      ...(signal === undefined ? {} : { signal }),
    });
    req.on('socket', (opened: Socket) => {
      socket = opened;
      options.onSocket?.(opened);
    });
    req.on('error', (error) => finish({ kind: classifyError(error, false), detail: describeError(error) }));
    req.on('response', (res) => {
      status = res.statusCode ?? 0;
      headers = res.headers;
      // A HEAD answer names the length of a body it never sends.
      const contentLength = options.method === 'HEAD' ? undefined : parseContentLength(res.headers['content-length']);
      const chunks: Buffer[] = [];
      let received = 0;
      let error: unknown;
      res.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        received += chunk.length;
      });
      res.on('error', (cause) => (error = cause));
      // 'close' comes last whatever happened: after 'end', or after the socket died mid-body.
      res.on('close', () => {
        body = Buffer.concat(chunks).toString();
        if (res.complete) return finish(checkResponse(status, contentLength, received));
        const cause = error === undefined ? 'connection closed' : describeError(error);
        finish({ kind: 'truncated', detail: `body ${received} of ${contentLength ?? 'unknown'} bytes: ${cause}` });
      });
    });
    req.end(options.body);
  });
}

/** An HTTP/1.1 request that must be answered (any status): rejects on no answer or a cut one. */
export async function http1Answer(options: Http1Request): Promise<Answer & { readonly socket: Socket | undefined }> {
  return answered(await http1Request(options), `${options.method ?? 'GET'} ${options.path ?? '/'} on ${options.socketPath ?? options.port}`);
}

export interface Http1Connection extends Connection {
  readonly socket: Socket;
  /** The answer after which the connection sat idle in its pool. */
  readonly first: { readonly status: number; readonly connection: string | undefined };
}

/** An HTTP/1.1 keep-alive connection left idle in its pool after one answered request; `host`: its Host header. */
export async function idleHttp1(port: number, path = '/', { servername, host }: { servername?: string; host?: string } = {}): Promise<Http1Connection> {
  const pool = { keepAlive: true, maxSockets: 1 };
  const agent = servername === undefined ? new Agent(pool) : new HttpsAgent({ ...pool, servername, rejectUnauthorized: false });
  const answer = await http1Answer({
    port,
    path,
    agent,
    ...(servername === undefined ? {} : { servername }),
    ...(host === undefined ? {} : { headers: { host } }),
  });
  const socket = answer.socket as Socket;
  return {
    protocol: 'http1',
    socket,
    first: { status: answer.status, connection: answer.connection },
    closed: () => socket.destroyed,
    whenClosed: closeEvent(socket),
    close: async () => {
      await destroy(socket);
      agent.destroy();
    },
  };
}

/** A request the upstream holds (`/held`) on a connection of its own: busy until the test releases it. */
export function busyHttp1(port: number, path = '/held'): Connection & { readonly answer: Promise<Http1Connection['first']> } {
  let opened: (socket: Socket) => void = () => undefined;
  const socket = new Promise<Socket>((resolve) => (opened = resolve));
  let closed = false;
  const whenClosed = socket.then(closeEvent).then(() => {
    closed = true;
  });
  const answer = http1Request({ port, path, timeoutMs: HELD_TIMEOUT_MS, onSocket: opened }).then((a) => {
    const { status, connection } = answered(a, `the held request to ${port}`);
    return { status, connection };
  });
  answer.catch(() => undefined);
  return { protocol: 'http1', answer, closed: () => closed, whenClosed, close: async () => destroy(await socket) };
}

const { NGHTTP2_CANCEL, NGHTTP2_NO_ERROR, NGHTTP2_REFUSED_STREAM } = http2.constants;
/** The HTTP/2 HEADERS frame type: the first frame of a request. */
const FRAME_HEADERS = 0x1;

/**
 * One GET on `session`, bounded by its timeout: its answer, or 'unsent' when its HEADERS never left
 * the client (a GOAWAY came first), so it may go out again on another session.
 */
export function http2Request(session: ClientHttp2Session, path: string, timeoutMs = REQUEST_TIMEOUT_MS): Promise<Answer | 'unsent'> {
  return new Promise((resolve) => {
    let stream: ClientHttp2Stream | undefined;
    let status: number | undefined;
    let headers: IncomingHttpHeaders = {};
    let contentLength: number | undefined;
    const chunks: Buffer[] = [];
    let received = 0;
    let error: unknown;
    let unsent = false;
    const finish = (verdict: Verdict | 'unsent'): void => {
      clearTimeout(timer);
      const body = Buffer.concat(chunks).toString();
      resolve(verdict === 'unsent' ? verdict : { status: status ?? 0, connection: undefined, headers, body, at: Date.now(), failure: verdict });
    };
    const timer = setTimeout(() => {
      finish({ kind: 'timeout', detail: `no complete response within ${timeoutMs} ms` });
      stream?.close(NGHTTP2_CANCEL);
    }, timeoutMs);
    try {
      stream = session.request({ ':method': 'GET', ':path': path }, { endStream: true });
    } catch (cause) {
      // A GOAWAY Node has already read but not yet announced with its 'goaway' event.
      if ((cause as { code?: unknown }).code === 'ERR_HTTP2_GOAWAY_SESSION') return finish('unsent');
      return finish({ kind: 'other', detail: describeError(cause) });
    }
    const opened = stream;
    opened.on('response', (answered) => {
      headers = answered;
      status = Number(answered[':status']);
      contentLength = parseContentLength(answered['content-length']);
    });
    opened.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      received += chunk.length;
    });
    opened.on('error', (cause) => (error = cause));
    // nghttp2 will not start a stream once a GOAWAY came in (RFC 9113 6.8), even one requested just
    // before it was read: the HEADERS frame fails to send and the stream closes as REFUSED_STREAM.
    opened.on('frameError', (type: number) => (unsent ||= type === FRAME_HEADERS));
    // Node ends the readable side even when the session dies mid-body, so 'end' proves nothing:
    // the verdict waits for 'close' and looks at the reset code and the byte count.
    opened.on('close', () => finish(unsent ? 'unsent' : streamVerdict(status, contentLength, received, error, opened.rstCode)));
  });
}

function streamVerdict(status: number | undefined, contentLength: number | undefined, received: number, error: unknown, rstCode: number | undefined): Verdict {
  if (rstCode === NGHTTP2_REFUSED_STREAM) {
    return { kind: 'refused-stream', detail: 'stream refused (REFUSED_STREAM or above the GOAWAY last-stream-id)' };
  }
  if (status !== undefined) {
    const complete = contentLength === undefined ? rstCode === NGHTTP2_NO_ERROR || rstCode === undefined : received === contentLength;
    if (complete) return checkResponse(status, contentLength, received);
  }
  if (error !== undefined) return { kind: classifyError(error, status !== undefined), detail: describeError(error) };
  const detail = `stream closed with code ${rstCode ?? 'none'} after ${received} of ${contentLength ?? 'unknown'} body bytes`;
  return { kind: status === undefined ? 'reset' : 'truncated', detail };
}

export interface Http2Connection extends Connection {
  readonly session: ClientHttp2Session;
  /** GOAWAYs received, with Date.now() on arrival. */
  readonly goaways: ReadonlyArray<{ readonly code: number; readonly lastStreamId: number; readonly at: number }>;
  /** One GET on this session; rejects unless it was answered (any status). */
  get(path: string): Promise<{ status: number; at: number }>;
}

/** An HTTP/2 session over cleartext (prior knowledge, as gRPC and service meshes use it), once connected. */
export async function http2Connection(port: number): Promise<Http2Connection> {
  const session = http2.connect(`http://127.0.0.1:${port}`);
  const goaways: Array<{ code: number; lastStreamId: number; at: number }> = [];
  session.on('goaway', (code, lastStreamId) => goaways.push({ code, lastStreamId, at: Date.now() }));
  session.on('error', () => undefined);
  const whenClosed = closeEvent(session);
  await opened(session, 'connect');
  return {
    protocol: 'http2',
    session,
    goaways,
    closed: () => session.closed || session.destroyed,
    whenClosed,
    async get(path) {
      const answer = await http2Request(session, path, HELD_TIMEOUT_MS);
      if (answer === 'unsent') throw new Error(`${path}: never sent, the session said GOAWAY first`);
      const { status, at } = answered(answer, path);
      return { status, at };
    },
    close: () => destroy(session),
  };
}

/** An HTTP/2 session left idle after one request answered 200. */
export async function idleHttp2(port: number, path = '/'): Promise<Http2Connection> {
  const connection = await http2Connection(port);
  const { status } = await connection.get(path);
  if (status !== 200) throw new Error(`the idle HTTP/2 session's first request got status ${status}`);
  return connection;
}

export interface SideResult {
  readonly protocol: Protocol;
  readonly path: string;
  /** Undefined: answered 200 with the upstream's `ok`. */
  readonly failure: string | undefined;
}

/** One request on a connection of its own (a long one, in flight while the pod terminates), bounded by `timeoutMs`. */
export async function longRequest(port: number, protocol: Protocol, path: string, timeoutMs = 30_000): Promise<SideResult> {
  let answer: Answer | 'unsent';
  if (protocol === 'http1') {
    answer = await http1Request({ port, path, timeoutMs });
  } else {
    const session = http2.connect(`http://127.0.0.1:${port}`);
    session.on('error', () => undefined);
    answer = await http2Request(session, path, timeoutMs);
    session.destroy();
  }
  return { protocol, path, failure: problem(answer) };
}

/** What went wrong with a request to the tests' upstream (which answers `ok`), if anything. */
export function problem(answer: Answer | 'unsent'): string | undefined {
  if (answer === 'unsent') return 'never sent: the session said GOAWAY first';
  if (answer.failure !== undefined) return `${answer.failure.kind}: ${answer.failure.detail}`;
  return answer.body === 'ok\n' ? undefined : `status ${answer.status}, body ${JSON.stringify(answer.body.slice(0, 80))}`;
}

export interface StreamConnection extends Connection {
  readonly socket: Socket | TLSSocket;
  /** Writes `text` and resolves once the echo server's copy has come back through Envoy (within REQUEST_TIMEOUT_MS). */
  echo(text: string): Promise<void>;
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
  const whenClosed = closeEvent(socket);
  return {
    protocol: 'stream',
    socket,
    whenClosed,
    closed: () => socket.destroyed,
    echo: (text) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => fail(`no echo of ${text} within ${REQUEST_TIMEOUT_MS} ms`), REQUEST_TIMEOUT_MS);
        const fail = (why: string): void => {
          clearTimeout(timer);
          wakers.delete(check);
          reject(new Error(why));
        };
        const check = (): void => {
          if (!received.includes(text)) return;
          clearTimeout(timer);
          wakers.delete(check);
          resolve();
        };
        wakers.add(check);
        void whenClosed.then(() => fail(`closed before the echo of ${text}`));
        socket.write(text);
      }),
    close: () => destroy(socket),
  };
}

/** A raw TCP connection (through a tcp_proxy listener to the echo server, or one that never sends a request). */
export async function tcpStream(port: number): Promise<StreamConnection> {
  const socket = connect(port, '127.0.0.1');
  await opened(socket, 'connect');
  return echoing(socket);
}

/** A TLS connection with SNI `servername`; resolves once the handshake (with whoever answers that name) is done. */
export async function tlsStream(port: number, servername: string): Promise<StreamConnection & { readonly peerName: string | undefined }> {
  // The certificates are the test's own, self-signed: what is checked is who answered (the peer's name), not trust.
  const socket = tlsConnect({ host: '127.0.0.1', port, servername, rejectUnauthorized: false });
  await opened(socket, 'secureConnect');
  const subject = socket.getPeerCertificate().subject as { CN?: string } | undefined;
  return { ...echoing(socket), peerName: subject?.CN };
}

export type HttpAnswer = Pick<Answer, 'status' | 'headers' | 'body' | 'at'>;

/** A request to the manager or an admin API: a connection of its own, any status; rejects on no answer. */
export async function request(
  target: Pick<Http1Request, 'host' | 'port' | 'socketPath'>,
  path: string,
  options: Pick<Http1Request, 'method' | 'signal' | 'headers' | 'body' | 'timeoutMs'> = {},
): Promise<HttpAnswer> {
  // A long poll (`/shutdown/ready`) may wait out a whole drain: the test's own timeout bounds it first.
  const { status, headers, body, at } = await http1Answer({ timeoutMs: 600_000, ...target, path, ...options });
  return { status, headers, body, at };
}
