// The admin listener: serves the admin API over TCP or a Unix socket, counts its own connections
// under listener.admin.* / http.admin.* (never in server.total_connections), and logs every call.
// Admin faults are injected in front of real Envoy instead (test/support/real-envoy/admin-tap.ts).
import http from 'node:http';
import type { Socket } from 'node:net';
import { type AdminContext, type AdminResult, routeAdminRequest } from './admin-handlers.js';
import { readAdminRequest, sendAdminResponse, splitTarget } from './admin-request.js';
import { HttpStats, ListenerStats } from './connection-stats.js';
import type { AdminCall, ResolvedAdminAddress } from './options.js';
import type { StatsStore } from './stats-store.js';

export interface AdminServerDeps {
  address: ResolvedAdminAddress;
  stats: StatsStore;
  idleTimeoutMs: number;
  context: AdminContext;
  onCall: (call: AdminCall) => void;
}

export class AdminServer {
  private server: http.Server | undefined;
  private readonly sockets = new Set<Socket>();
  private readonly listenerStats: ListenerStats;
  private readonly httpStats: HttpStats;
  private boundPort = 0;

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
        server.listen({ host: address.host, port: address.port, exclusive: true }, done);
      }
    });
    const bound = server.address();
    if (typeof bound === 'object' && bound !== null) this.boundPort = bound.port;
    this.server = server;
  }

  close(): void {
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

    readAdminRequest(req).then(
      (request) => {
        const result: AdminResult = routeAdminRequest(request, this.deps.context);
        sendAdminResponse(res, result, result.afterSent);
      },
      () => res.destroy(),
    );
  }
}
