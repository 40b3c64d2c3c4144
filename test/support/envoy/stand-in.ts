// EnvoyStandIn: an in-process Envoy look-alike for tests, with real listen sockets, live stats,
// Envoy's admin API and its drain timeline. See /work/shared/reference/envoy.md for the behaviour.
import { EventEmitter } from 'node:events';
import type { AdminContext, DrainListenersRequest } from './admin-handlers.js';
import { AdminServer } from './admin-server.js';
import { DrainSequence } from './drain.js';
import { DataPlaneListener } from './listeners.js';
import {
  type AdminCall,
  type EnvoyStandInOptions,
  type InitState,
  type ResolvedOptions,
  type ServerState,
  resolveOptions,
} from './options.js';
import { renderServerInfo } from './server-info.js';
import { ServerStats } from './server-stats.js';
import { StatsStore } from './stats-store.js';

export type {
  AdminCall,
  DrainStrategy,
  DrainType,
  EnvoyStandInOptions,
  ListenerSpec,
  ServerState,
} from './options.js';

export class EnvoyStandIn {
  private readonly store = new StatsStore();
  private readonly serverStats: ServerStats;
  private readonly drain: DrainSequence;
  private readonly listeners: DataPlaneListener[];
  private readonly admin: AdminServer;
  private readonly emitter = new EventEmitter();
  private readonly callLog: AdminCall[] = [];
  private readonly startedAt = Date.now();
  private initState: InitState;
  private healthCheckFailed = false;
  private flushTimer: NodeJS.Timeout | undefined;
  private killed: Promise<void> | undefined;

  private constructor(private readonly options: ResolvedOptions) {
    this.initState = options.initialState;
    this.serverStats = new ServerStats(this.store, options);
    this.drain = new DrainSequence({ strategy: options.drainStrategy, drainTimeSeconds: options.drainTimeSeconds });
    this.listeners = options.listeners.map(
      (spec) =>
        new DataPlaneListener(spec, {
          stats: this.store,
          workers: options.workers,
          drain: this.drain,
          healthCheckFailed: () => this.healthCheckFailed,
          httpDrainTimeoutMs: options.httpDrainTimeoutMs,
          idleTimeoutMs: options.idleTimeoutMs,
        }),
    );
    this.admin = new AdminServer({
      address: options.admin,
      stats: this.store,
      idleTimeoutMs: options.idleTimeoutMs,
      context: this.adminContext(),
      onCall: (call) => {
        this.callLog.push(call);
        this.emitter.emit('admin-call', call);
      },
    });
  }

  static async start(options?: EnvoyStandInOptions): Promise<EnvoyStandIn> {
    const standIn = new EnvoyStandIn(resolveOptions(options));
    try {
      await Promise.all(standIn.listeners.map((listener) => listener.start()));
      await standIn.admin.open();
    } catch (error) {
      await standIn.kill();
      throw error;
    }
    standIn.serverStats.started(standIn.listeners.length, standIn.state);
    // With stats_flush_on_admin Envoy creates no flush timer: only /stats requests flush.
    if (!standIn.options.statsFlushOnAdmin) {
      standIn.flushTimer = setInterval(() => standIn.flush(), standIn.options.statsFlushIntervalMs);
    }
    return standIn;
  }

  get adminAddress(): string {
    return this.admin.address;
  }

  get calls(): readonly AdminCall[] {
    return this.callLog;
  }

  get state(): ServerState {
    if (this.initState !== 'LIVE') return this.initState;
    return this.healthCheckFailed ? 'DRAINING' : 'LIVE';
  }

  get drainStartedAt(): number | undefined {
    return this.drain.startedAt;
  }

  listenerPort(name: string): number {
    const listener = this.listeners.find((candidate) => candidate.spec.name === name);
    if (listener === undefined) throw new Error(`no listener named "${name}"`);
    return listener.port;
  }

  /** A counter's or gauge's value as held right now (not as of the last flush). */
  stat(name: string): number | undefined {
    return this.store.value(name);
  }

  /** Moves the init manager along, e.g. INITIALIZING -> LIVE, as a config load finishing would. */
  setInitState(state: InitState): void {
    this.initState = state;
    this.serverStats.liveChanged(this.state);
  }

  /** Resolves once the admin listen socket is closed or reopened; callers may ignore it. */
  on(event: 'admin-call', listener: (call: AdminCall) => void): this;
  on(event: 'quit', listener: () => void): this;
  on(event: 'admin-call' | 'quit', listener: ((call: AdminCall) => void) | (() => void)): this {
    this.emitter.on(event, listener);
    return this;
  }

  off(event: 'admin-call' | 'quit', listener: ((call: AdminCall) => void) | (() => void)): this {
    this.emitter.off(event, listener);
    return this;
  }

  /** What SIGTERM does to Envoy: it exits at once, every listen socket and connection gone. */
  kill(): Promise<void> {
    this.killed ??= (async () => {
      if (this.flushTimer !== undefined) clearInterval(this.flushTimer);
      this.drain.dispose();
      for (const listener of this.listeners) listener.kill();
      this.admin.close();
      // Let the sockets' 'close' events run before the caller looks around.
      await new Promise((resolve) => setImmediate(resolve));
    })();
    return this.killed;
  }

  close(): Promise<void> {
    return this.kill();
  }

  /** A stats flush: the only moment server.total_connections and histograms are recomputed. */
  private flush(): void {
    const connections = this.listeners.reduce((sum, listener) => sum + listener.connectionCount, 0);
    this.serverStats.flush(connections, this.state);
  }

  private stopListeners(inboundOnly: boolean): void {
    for (const listener of this.listeners) {
      if (inboundOnly && listener.spec.trafficDirection !== 'INBOUND') continue;
      if (listener.stop()) this.serverStats.listenerStopped();
    }
  }

  private adminContext(): AdminContext {
    return {
      stats: this.store,
      state: () => this.state,
      setHealthCheckFailed: (failed) => {
        this.healthCheckFailed = failed;
        this.serverStats.liveChanged(this.state);
      },
      drainListeners: (request: DrainListenersRequest) => {
        if (!request.graceful) {
          this.stopListeners(request.inboundOnly);
          return;
        }
        // At the deadline: listeners close unless skip_exit; connections are never closed here.
        this.drain.start(request.inboundOnly, () => {
          if (!request.skipExit) this.stopListeners(request.inboundOnly);
        });
      },
      serverInfo: () =>
        renderServerInfo({
          version: this.options.version,
          state: this.state,
          concurrency: this.options.workers,
          drainTimeSeconds: this.options.drainTimeSeconds,
          drainStrategy: this.options.drainStrategy,
          startedAt: this.startedAt,
          now: Date.now(),
        }),
      listeners: () => this.listeners.map((listener) => ({ name: listener.spec.name, host: listener.spec.host, port: listener.port })),
      afterStatsRequest: () => {
        if (this.options.statsFlushOnAdmin) this.flush();
      },
      quit: () => {
        void this.kill().then(() => this.emitter.emit('quit'));
      },
    };
  }
}
