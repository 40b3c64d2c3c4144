// Per-listener and per-HTTP-connection-manager stats, driven only by socket and request events.
// They are created when the listener is, so they show in /stats (unused, value 0) before any traffic.
import type { Counter, Gauge, Histogram, StatsStore } from './stats-store.js';

interface CxPair {
  active: Gauge;
  total: Counter;
}

/** `<prefix>.downstream_cx<infix>_active` and `_total`. */
function cxPair(store: StatsStore, prefix: string, infix = ''): CxPair {
  return {
    active: store.gauge(`${prefix}.downstream_cx${infix}_active`),
    total: store.counter(`${prefix}.downstream_cx${infix}_total`),
  };
}

/**
 * listener.<name>.downstream_cx_* plus one copy per connection handler: worker_<n> for data-plane
 * listeners, main_thread for the admin listener. The copies partition the listener's connections.
 */
export class ListenerStats {
  private readonly listener: CxPair;
  private readonly handlers: CxPair[];
  private readonly length: Histogram;

  constructor(store: StatsStore, name: string, handlerNames: readonly string[]) {
    this.listener = cxPair(store, `listener.${name}`);
    this.handlers = handlerNames.map((handler) => cxPair(store, `listener.${name}.${handler}`));
    this.length = store.histogram(`listener.${name}.downstream_cx_length_ms`);
  }

  /** Counts an accepted connection on a handler; the returned function counts its close. */
  opened(handler: number): () => void {
    const openedAt = Date.now();
    const pairs = [this.listener, this.handlers[handler % this.handlers.length]];
    for (const pair of pairs) {
      pair?.active.inc();
      pair?.total.inc();
    }
    let closed = false;
    return () => {
      if (closed) return;
      closed = true;
      for (const pair of pairs) pair?.active.dec();
      this.length.record(Date.now() - openedAt);
    };
  }
}

export type HttpCodecKind = 'http1' | 'http2';

/** http.<stat_prefix>.*: the HTTP connection manager's view of the same connections. */
export class HttpStats {
  private readonly cx: CxPair;
  private readonly codecs: Record<HttpCodecKind, CxPair>;
  private readonly length: Histogram;
  private readonly rqTotal: Counter;
  private readonly rqActive: Gauge;
  private readonly rqByClass: Map<number, Counter>;
  private readonly rqTime: Histogram;
  readonly drainClose: Counter;
  readonly idleTimeout: Counter;

  constructor(store: StatsStore, prefix: string) {
    const base = `http.${prefix}`;
    this.cx = cxPair(store, base);
    this.codecs = {
      http1: cxPair(store, base, '_http1'),
      http2: cxPair(store, base, '_http2'),
    };
    this.length = store.histogram(`${base}.downstream_cx_length_ms`);
    this.rqTotal = store.counter(`${base}.downstream_rq_total`);
    this.rqActive = store.gauge(`${base}.downstream_rq_active`);
    this.rqByClass = new Map([1, 2, 3, 4, 5].map((cls) => [cls, store.counter(`${base}.downstream_rq_${cls}xx`)]));
    this.rqTime = store.histogram(`${base}.downstream_rq_time`);
    this.drainClose = store.counter(`${base}.downstream_cx_drain_close`);
    this.idleTimeout = store.counter(`${base}.downstream_cx_idle_timeout`);
  }

  /** A connection handed to the connection manager; the returned function counts its close. */
  opened(): () => void {
    const openedAt = Date.now();
    this.cx.active.inc();
    this.cx.total.inc();
    let closed = false;
    return () => {
      if (closed) return;
      closed = true;
      this.cx.active.dec();
      this.length.record(Date.now() - openedAt);
    };
  }

  /** The codec is only known once the first bytes arrive; the returned function counts the close. */
  codecChosen(kind: HttpCodecKind): () => void {
    const pair = this.codecs[kind];
    pair.active.inc();
    pair.total.inc();
    return () => pair.active.dec();
  }

  /** Counts a request; the returned function records its response status and duration. */
  requestStarted(): (status: number) => void {
    const startedAt = Date.now();
    this.rqTotal.inc();
    this.rqActive.inc();
    let done = false;
    return (status) => {
      if (done) return;
      done = true;
      this.rqActive.dec();
      this.rqByClass.get(Math.floor(status / 100))?.inc();
      this.rqTime.record(Date.now() - startedAt);
    };
  }
}
