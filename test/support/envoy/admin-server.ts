// The admin listener: serves the admin API over TCP or a Unix socket, counts its own connections
// under listener.admin.* / http.admin.* (never in server.total_connections), logs every call,
// and can be told to misbehave.
import { rmSync } from 'node:fs';
import http from 'node:http';
import type { Socket } from 'node:net';
import { type AdminContext, type AdminResult, routeAdminRequest } from './admin-handlers.js';
import { readAdminRequest, sendAdminResponse, splitTarget } from './admin-request.js';
import { HttpStats, ListenerStats } from './connection-stats.js';
import type { AdminCall, AdminFault, ResolvedAdminAddress } from './options.js';
import type { StatsStore } from './stats-store.js';

export interface AdminServerDeps {
  address: ResolvedAdminAddress;
  stats: StatsStore;
  idleTimeoutMs: number;
  context: AdminContext;
  onCall: (call: AdminCall) => void;
}

/** What a 'garbage' fault answers: cut-off JSON under a JSON content type. */
const GARBAGE_BODY = '{"stats":[{"name":"server.total_connections","val';

export class AdminServer {
  private server: http.Server | undefined;
  private readonly sockets = new Set<Socket>();
  private readonly listenerStats: ListenerStats;
  private readonly httpStats: HttpStats;
  private fault: AdminFault | undefined;
  private boundPort = 0;
  private closed = false;

  constructor(private readonly deps: AdminServerDeps) {
    // Envoy's admin runs on the main thread, so its per-handler copy is main_thread, not worker_N.
    this.listenerStats = new ListenerStats(deps.stats, 'admin', ['main_thread']);
    this.httpStats = new HttpStats(deps.stats, 'admin');
  }

  /** The address in the CLI's syntax: '127.0.0.1:PORT', '[::1]:PORT' or 'unix:/path'. */
  get address(): string {
    const address = this.deps.address;
    if ('unixSocket' in address) return `unix:${address.unixSocket}`;
    return address.host.includes(':') ? `[${address.host}]:${this.boundPort}` : `${address.host}:${this.boundPort}`;
  }

  async open(): Promise<void> {
    const server = http.createServer({ keepAliveTimeout: this.deps.idleTimeoutMs, requestTimeout: 0 }, (req, res) =>
      this.onRequest(req, res),
    );
    server.on('connection', (socket: Socket) => this.onConnection(socket));
    const address = this.deps.address;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      const done = (): void => {
        server.off('error', reject);
        resolve();
      };
      if ('unixSocket' in address) {
        // A leading '@' names a socket in Linux's abstract namespace, as in Envoy's pipe.path.
        const path = address.unixSocket.startsWith('@') ? `\0${address.unixSocket.slice(1)}` : address.unixSocket;
        server.listen({ path }, done);
      } else {
        // Reopening after a 'refuse' fault binds the same port again.
        server.listen({ host: address.host, port: this.boundPort || address.port, exclusive: true }, done);
      }
    });
    const bound = server.address();
    if (typeof bound === 'object' && bound !== null) this.boundPort = bound.port;
    this.server = server;
  }

  /** Applies a fault; resolves once the listen socket is closed or reopened as the fault requires. */
  async setFault(fault: AdminFault | undefined): Promise<void> {
    const wasRefusing = this.fault?.kind === 'refuse';
    this.fault = fault;
    if (this.closed) return;
    if (fault?.kind === 'refuse' && !wasRefusing) {
      // As if Envoy were gone: kept-alive connections must not keep working either.
      this.closeListenSocket();
      this.destroyConnections();
    } else if (fault?.kind !== 'refuse' && wasRefusing) {
      const address = this.deps.address;
      if ('unixSocket' in address && !address.unixSocket.startsWith('@')) rmSync(address.unixSocket, { force: true });
      await this.open();
    }
  }

  close(): void {
    this.closed = true;
    this.closeListenSocket();
    this.destroyConnections();
  }

  private closeListenSocket(): void {
    this.server?.close();
    this.server = undefined;
  }

  private destroyConnections(): void {
    for (const socket of this.sockets) socket.destroy();
  }

  private onConnection(socket: Socket): void {
    this.sockets.add(socket);
    const closeListener = this.listenerStats.opened(0);
    const closeHttp = this.httpStats.opened();
    const closeCodec = this.httpStats.codecChosen('http1');
    socket.on('error', () => {});
    socket.once('close', () => {
      this.sockets.delete(socket);
      closeListener();
      closeHttp();
      closeCodec();
    });
  }

  private onRequest(req: http.IncomingMessage, res: http.ServerResponse): void {
    const { rawPath, rawQuery } = splitTarget(req.url ?? '/');
    this.deps.onCall({ method: req.method ?? 'GET', path: rawPath, query: rawQuery, time: Date.now() });
    const finished = this.httpStats.requestStarted();
    res.once('close', () => finished(res.statusCode));

    const fault = this.fault;
    if (fault?.kind === 'hang') {
      req.resume(); // accepted and read, never answered
      return;
    }
    if (fault?.kind === 'status') {
      req.resume();
      sendAdminResponse(res, { status: fault.status, body: `stand-in fault: status ${fault.status}\n` });
      return;
    }
    if (fault?.kind === 'garbage') {
      req.resume();
      sendAdminResponse(res, { status: 200, body: GARBAGE_BODY, contentType: 'application/json' });
      return;
    }
    readAdminRequest(req).then(
      (request) => {
        const result: AdminResult = routeAdminRequest(request, this.deps.context);
        sendAdminResponse(res, result, result.afterSent);
      },
      () => res.destroy(),
    );
  }
}
