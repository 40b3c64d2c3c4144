// server.* and listener_manager.* stats. Most are only refreshed by a stats flush, as in Envoy,
// so a poller sees server.total_connections move in flush-interval steps.
import type { ResolvedOptions, ServerState } from './options.js';
import { revisionFor } from './server-info.js';
import type { Counter, Gauge, StatsStore } from './stats-store.js';

/** The server.state gauge's encoding of the server state. */
const STATE_VALUE: Record<ServerState, number> = { LIVE: 0, DRAINING: 1, PRE_INITIALIZING: 2, INITIALIZING: 3 };

export class ServerStats {
  private readonly startedAt = Date.now();
  private readonly live: Gauge;
  private readonly state: Gauge;
  private readonly uptime: Gauge;
  private readonly totalConnections: Gauge;
  private readonly parentConnections: Gauge;
  private readonly memoryAllocated: Gauge;
  private readonly memoryHeapSize: Gauge;
  private readonly listenerStoppedCount: Counter;

  constructor(
    private readonly store: StatsStore,
    private readonly options: ResolvedOptions,
  ) {
    this.live = store.gauge('server.live');
    this.state = store.gauge('server.state');
    this.uptime = store.gauge('server.uptime');
    this.totalConnections = store.gauge('server.total_connections');
    this.parentConnections = store.gauge('server.parent_connections');
    this.memoryAllocated = store.gauge('server.memory_allocated');
    this.memoryHeapSize = store.gauge('server.memory_heap_size');
    this.listenerStoppedCount = store.counter('listener_manager.listener_stopped');
    // Exists in Envoy but stays unset without xDS: shows up only without usedonly.
    store.textReadout('control_plane.identifier');
    store.counter('listener_manager.listener_added');
    store.counter('server.debug_assertion_failures');
  }

  /** Values Envoy sets once at startup. */
  started(listenerCount: number, state: ServerState): void {
    const store = this.store;
    store.gauge('server.concurrency').set(this.options.workers);
    store.gauge('server.hot_restart_epoch').set(0);
    // Envoy's server.version is the first six hex digits of the build's git SHA, as a number.
    store.gauge('server.version').set(parseInt(revisionFor(this.options.version).slice(0, 6), 16));
    store.gauge('server.compilation_settings.fips_mode').set(0);
    store.gauge('listener_manager.total_listeners_active').set(listenerCount);
    store.gauge('listener_manager.workers_started').set(1);
    store.counter('listener_manager.listener_added').inc(listenerCount);
    this.state.set(STATE_VALUE[state]);
    this.liveChanged(state);
  }

  /** server.live follows health at once; server.state waits for the next flush. */
  liveChanged(state: ServerState): void {
    this.live.set(state === 'LIVE' ? 1 : 0);
  }

  listenerStopped(): void {
    this.listenerStoppedCount.inc();
  }

  /** dataPlaneConnections: connections owned by workers on data-plane listeners (admin excluded). */
  flush(dataPlaneConnections: number, state: ServerState): void {
    this.totalConnections.set(dataPlaneConnections);
    this.parentConnections.set(0);
    this.uptime.set(Math.floor((Date.now() - this.startedAt) / 1000));
    this.state.set(STATE_VALUE[state]);
    const memory = process.memoryUsage();
    this.memoryAllocated.set(memory.heapUsed);
    this.memoryHeapSize.set(memory.heapTotal);
    this.store.mergeHistograms();
  }
}
