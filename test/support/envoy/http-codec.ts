// The HTTP connection manager of one http listener: codec AUTO (HTTP/1.1, or HTTP/2 when the
// client opens with the prior-knowledge preface), the health check filter, and per-connection drain.
import http from 'node:http';
import http2 from 'node:http2';
import type { Socket } from 'node:net';
import type { HttpStats } from './connection-stats.js';
import { type DrainTimer, goawayShutdownNotice, startH2Drain } from './http2-drain.js';
import type { ResolvedListenerSpec } from './options.js';

/** The cleartext HTTP/2 connection preface; any other first bytes mean HTTP/1.x. */
const H2_PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');

export interface HttpCodecDeps {
  listener: ResolvedListenerSpec;
  stats: HttpStats;
  /** drainClose() for this listener, asked while encoding each response. */
  drainClose: () => boolean;
  healthCheckFailed: () => boolean;
  httpDrainTimeoutMs: number;
  idleTimeoutMs: number;
}

interface LocalResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export class HttpCodec {
  private readonly h1: http.Server;
  private readonly h2: http2.Http2Server;
  private readonly timers = new Set<NodeJS.Timeout>();
  /** Requests in flight per HTTP/1.1 socket and open streams per HTTP/2 session: not idle. */
  private readonly inFlight = new WeakMap<Socket, number>();
  private readonly openStreams = new WeakMap<http2.Http2Session, number>();
  private readonly h2Idle = new Map<http2.Http2Session, NodeJS.Timeout>();
  private readonly h2Drains = new Map<http2.Http2Session, DrainTimer>();
  private readonly rawSockets = new WeakMap<http2.Http2Session, Socket>();
  /** The socket being handed to the HTTP/2 server, whose 'session' event fires synchronously. */
  private adopting: Socket | undefined;

  constructor(private readonly deps: HttpCodecDeps) {
    // Never listens itself: sockets arrive from the listener. Node's keep-alive timer is off (it
    // overshoots by a second); the idle timeout is kept here instead, see onH1Request.
    this.h1 = http.createServer({ keepAliveTimeout: 0, requestTimeout: 0 }, (req, res) => this.onH1Request(req, res));
    this.h1.on('timeout', (socket: Socket) => {
      deps.stats.idleTimeout.inc();
      socket.destroy();
    });
    this.h2 = http2.createServer();
    this.h2.on('session', (session) => this.onSession(session));
    this.h2.on('stream', (stream, headers) => this.onH2Stream(stream, headers));
  }

  /** Takes an accepted socket: waits for enough bytes to tell the codec, then hands it over. */
  adopt(socket: Socket): void {
    const closeHttp = this.deps.stats.opened();
    socket.once('close', closeHttp);
    const onIdle = (): void => {
      this.deps.stats.idleTimeout.inc();
      socket.destroy();
    };
    socket.setTimeout(this.deps.idleTimeoutMs);
    socket.once('timeout', onIdle);
    let received = Buffer.alloc(0);
    const onData = (chunk: Buffer): void => {
      received = Buffer.concat([received, chunk]);
      const n = Math.min(received.length, H2_PREFACE.length);
      const isH2 = received.subarray(0, n).equals(H2_PREFACE.subarray(0, n));
      if (isH2 && n < H2_PREFACE.length) return;
      socket.off('data', onData);
      socket.off('timeout', onIdle);
      // HTTP/1.1 idles on the socket (the server's 'timeout' handler), HTTP/2 on its session.
      socket.setTimeout(isH2 ? 0 : this.deps.idleTimeoutMs);
      socket.pause();
      socket.unshift(received);
      socket.once('close', this.deps.stats.codecChosen(isH2 ? 'http2' : 'http1'));
      if (isH2) {
        // The HTTP/2 session reads what was unshifted on its own, on the next tick.
        this.adopting = socket;
        this.h2.emit('connection', socket);
        this.adopting = undefined;
      } else {
        this.h1.emit('connection', socket);
        socket.resume();
      }
    };
    socket.on('data', onData);
  }

  dispose(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    for (const drain of this.h2Drains.values()) drain.cancel();
    this.h2Drains.clear();
    for (const timer of this.h2Idle.values()) clearTimeout(timer);
    this.h2Idle.clear();
  }

  private onH1Request(req: http.IncomingMessage, res: http.ServerResponse): void {
    const finished = this.deps.stats.requestStarted();
    // Idle means no request in flight: the idle clock restarts when the last one ends.
    const socket = req.socket;
    this.inFlight.set(socket, (this.inFlight.get(socket) ?? 0) + 1);
    socket.setTimeout(0);
    res.once('close', () => {
      finished(res.headersSent ? res.statusCode : 0);
      const left = (this.inFlight.get(socket) ?? 1) - 1;
      this.inFlight.set(socket, left);
      if (left === 0 && !socket.destroyed) socket.setTimeout(this.deps.idleTimeoutMs);
    });
    req.resume();
    this.afterDelay(() => {
      if (res.destroyed || res.writableEnded) return;
      const response = this.localResponse(req.url ?? '/');
      if (this.deps.drainClose()) {
        // Node then closes the connection once this response is written.
        res.setHeader('connection', 'close');
        this.deps.stats.drainClose.inc();
      }
      send(response, (status, headers) => res.writeHead(status, headers), (body) => res.end(body));
    });
  }

  private onSession(session: http2.ServerHttp2Session): void {
    const socket = this.adopting;
    if (socket !== undefined) this.rawSockets.set(session, socket);
    session.on('error', () => {});
    this.openStreams.set(session, 0);
    this.armIdle(session);
    session.once('close', () => {
      this.h2Drains.get(session)?.cancel();
      this.h2Drains.delete(session);
      clearTimeout(this.h2Idle.get(session));
      this.h2Idle.delete(session);
    });
  }

  private onH2Stream(stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders): void {
    const finished = this.deps.stats.requestStarted();
    const owner = stream.session;
    if (owner !== undefined) {
      this.openStreams.set(owner, (this.openStreams.get(owner) ?? 0) + 1);
      clearTimeout(this.h2Idle.get(owner));
    }
    let status = 0;
    stream.on('error', () => {});
    stream.once('close', () => {
      finished(status);
      if (owner === undefined) return;
      const left = (this.openStreams.get(owner) ?? 1) - 1;
      this.openStreams.set(owner, left);
      if (left === 0) this.armIdle(owner);
    });
    stream.resume();
    this.afterDelay(() => {
      const session = stream.session;
      if (stream.destroyed || stream.closed || session === undefined) return;
      const response = this.localResponse(headers[':path'] ?? '/');
      // Like Envoy, once a connection drains it is not asked again.
      if (!this.h2Drains.has(session) && this.deps.drainClose()) this.startDrain(session);
      status = response.status;
      send(response, (code, extra) => stream.respond({ ':status': code, ...extra }), (body) => stream.end(body));
    });
  }

  /**
   * Envoy's idle_timeout: no stream open for that long. Node's session.setTimeout would count
   * any frame as activity and not re-arm after firing, so the timer is kept here.
   */
  private armIdle(session: http2.Http2Session): void {
    clearTimeout(this.h2Idle.get(session));
    if (this.deps.idleTimeoutMs === 0 || session.closed || session.destroyed) return;
    const timer = setTimeout(() => {
      this.deps.stats.idleTimeout.inc();
      session.close();
    }, this.deps.idleTimeoutMs);
    this.h2Idle.set(session, timer);
  }

  private startDrain(session: http2.Http2Session): void {
    this.deps.stats.drainClose.inc();
    // A session already closing (Node closes it when the client sends GOAWAY) has sent its own
    // GOAWAY with the real last stream id: a notice now would raise that id, which HTTP/2 forbids
    // (RFC 9113 6.8) and a client treats as a protocol error. Envoy sends nothing more either.
    if (session.closed || session.destroyed) return;
    const socket = this.rawSockets.get(session);
    if (socket !== undefined) goawayShutdownNotice(socket);
    this.h2Drains.set(session, startH2Drain(session, this.deps.httpDrainTimeoutMs));
  }

  /** What the health check filter or the stand-in's "upstream" answers to a request path. */
  private localResponse(path: string): LocalResponse {
    const { healthCheckPath, name } = this.deps.listener;
    const failed = this.deps.healthCheckFailed();
    if (healthCheckPath !== undefined && path === healthCheckPath) {
      return { status: failed ? 503 : 200, headers: {}, body: '' };
    }
    const headers: Record<string, string> = { 'content-type': 'text/plain' };
    if (healthCheckPath !== undefined && failed) headers['x-envoy-immediate-health-check-fail'] = 'true';
    return { status: 200, headers, body: `envoy stand-in: listener ${name}\n` };
  }

  private afterDelay(respond: () => void): void {
    if (this.deps.listener.responseDelayMs === 0) {
      respond();
      return;
    }
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      respond();
    }, this.deps.listener.responseDelayMs);
    this.timers.add(timer);
  }
}

function send(
  response: LocalResponse,
  writeHead: (status: number, headers: Record<string, string | number>) => void,
  end: (body: Buffer) => void,
): void {
  const body = Buffer.from(response.body, 'utf8');
  writeHead(response.status, { ...response.headers, 'content-length': body.length, server: 'envoy' });
  end(body);
}
