// A data-plane listener: a real listen socket whose accepted connections are spread over workers
// round-robin, counted from socket events, and served as HTTP (codec AUTO) or echoed as TCP.
import net from 'node:net';
import { ListenerStats, HttpStats } from './connection-stats.js';
import type { DrainSequence } from './drain.js';
import { HttpCodec } from './http-codec.js';
import type { ResolvedListenerSpec } from './options.js';
import type { StatsStore } from './stats-store.js';

export interface DataPlaneListenerDeps {
  stats: StatsStore;
  workers: number;
  drain: DrainSequence;
  healthCheckFailed: () => boolean;
  httpDrainTimeoutMs: number;
  idleTimeoutMs: number;
}

export class DataPlaneListener {
  private readonly server: net.Server;
  private readonly sockets = new Set<net.Socket>();
  private readonly listenerStats: ListenerStats;
  private readonly codec: HttpCodec | undefined;
  private nextWorker = 0;
  private boundPort = 0;
  private accepting = false;

  constructor(
    readonly spec: ResolvedListenerSpec,
    private readonly deps: DataPlaneListenerDeps,
  ) {
    const workerNames = Array.from({ length: deps.workers }, (_, n) => `worker_${n}`);
    this.listenerStats = new ListenerStats(deps.stats, spec.name, workerNames);
    if (spec.kind === 'http') {
      this.codec = new HttpCodec({
        listener: spec,
        stats: new HttpStats(deps.stats, spec.name),
        // TCP proxies never drain; HTTP connection managers ask on every response.
        drainClose: () => deps.drain.drainClose(spec, deps.healthCheckFailed()),
        healthCheckFailed: deps.healthCheckFailed,
        httpDrainTimeoutMs: deps.httpDrainTimeoutMs,
        idleTimeoutMs: deps.idleTimeoutMs,
      });
    }
    this.server = net.createServer({ noDelay: true }, (socket) => this.onConnection(socket));
  }

  get port(): number {
    return this.boundPort;
  }

  get isAccepting(): boolean {
    return this.accepting;
  }

  get connectionCount(): number {
    return this.sockets.size;
  }

  start(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen({ host: this.spec.host, port: this.spec.port, exclusive: true }, () => {
        this.server.off('error', reject);
        const address = this.server.address();
        this.boundPort = typeof address === 'object' && address !== null ? address.port : 0;
        this.accepting = true;
        resolve();
      });
    });
  }

  /** Closes the listen socket: new connections are refused, existing ones carry on. */
  stop(): boolean {
    if (!this.accepting) return false;
    this.accepting = false;
    this.server.close();
    return true;
  }

  /** What Envoy's exit does to this listener: listen socket and every connection gone at once. */
  kill(): void {
    this.stop();
    this.codec?.dispose();
    for (const socket of this.sockets) socket.destroy();
  }

  private onConnection(socket: net.Socket): void {
    const worker = this.nextWorker;
    this.nextWorker = (this.nextWorker + 1) % this.deps.workers;
    const closeListener = this.listenerStats.opened(worker);
    this.sockets.add(socket);
    // Resets from clients are normal traffic, not fixture failures.
    socket.on('error', () => {});
    socket.once('close', () => {
      this.sockets.delete(socket);
      closeListener();
    });
    if (this.codec !== undefined) {
      this.codec.adopt(socket);
    } else {
      socket.setTimeout(this.deps.idleTimeoutMs, () => socket.destroy());
      socket.pipe(socket);
    }
  }
}
