// The traffic stand-in: well-behaved HTTP/1.1 and HTTP/2 clients behind a load balancer, in front
// of a pod that Kubernetes terminates. A correct drain shows zero failures; a broken one shows them.
import { pollUntil } from '../poll.js';
import { LoadBalancer } from './load-balancer.js';
import { TrafficRecorder, type TrafficStats } from './recorder.js';
import { runLoop } from './request-loop.js';
import { type ClientContext, Http1Client, Http2Client, type TrafficClient } from './routed-clients.js';
import { type ResolvedTrafficOptions, resolveTrafficOptions, type TrafficOptions } from './traffic-options.js';

export type { Endpoint } from './load-balancer.js';
export type { TrafficStats } from './recorder.js';
export type { TrafficOptions } from './traffic-options.js';

/** Bounds each loop of a run the test never stopped: longer than any termination here lasts. */
const LOOP_BOUNDS = { maxRequests: 1_000_000, maxMs: 15 * 60_000 };

export class Traffic {
  private readonly controller = new AbortController();
  private readonly loops: Array<Promise<void>> = [];
  /** Per request loop: when the last request that ended was sent (Date.now()). */
  private readonly lastSent: number[] = [];
  private churnTimer: NodeJS.Timeout | undefined;
  private stopped: Promise<TrafficStats> | undefined;

  private constructor(
    private readonly options: ResolvedTrafficOptions,
    private readonly lb: LoadBalancer,
    private readonly recorder: TrafficRecorder,
    private readonly clients: readonly TrafficClient[],
  ) {}

  /** Resolves once every request loop has completed (answered or failed) at least one request. */
  static async start(options: TrafficOptions): Promise<Traffic> {
    const resolved = resolveTrafficOptions(options);
    const lb = new LoadBalancer({ terminating: resolved.terminating, healthy: resolved.healthy });
    const recorder = new TrafficRecorder();
    const context: ClientContext = { lb, recorder, path: resolved.path, requestTimeoutMs: resolved.requestTimeoutMs };
    const clients: TrafficClient[] = [
      ...Array.from({ length: resolved.http1Clients }, () => new Http1Client(context)),
      ...Array.from({ length: resolved.http2Clients }, () => new Http2Client(context)),
    ];
    const traffic = new Traffic(resolved, lb, recorder, clients);
    await traffic.run();
    return traffic;
  }

  /**
   * Kubernetes marked the pod terminating: for `deprogrammingDelayMs` more, the LB still sends NEW
   * connections to it; then only to `healthy`. Existing connections are never moved by the LB:
   * they live until the server closes them (Connection: close, GOAWAY, reset).
   */
  terminationStarted(deprogrammingDelayMs: number): void {
    this.lb.terminationStarted(deprogrammingDelayMs);
  }

  /** Date.now() from which the LB sends new connections only to `healthy`; undefined before terminationStarted. */
  get deprogrammedAt(): number | undefined {
    return this.lb.deprogrammedAtMs;
  }

  /**
   * Resolves once every request loop has had its answer (or its failure) to a request sent at or
   * after `at`: each client has gone back through the load balancer since then, or found its
   * connection to a pod that is gone.
   */
  untilEveryClientSentSince(at: number, timeoutMs = 30_000): Promise<void> {
    return pollUntil(`every client answered for a request sent after ${new Date(at).toISOString()}`, () => this.lastSent.every((sent) => sent >= at), {
      timeoutMs,
      everyMs: 5,
      lastSeen: () => JSON.stringify(this.lastSent.map((sent) => sent - at)),
    });
  }

  /** A snapshot: it does not change as traffic goes on. */
  get stats(): TrafficStats {
    return this.recorder.snapshot();
  }

  /**
   * Stops issuing requests, waits for those in flight (each bounded by requestTimeoutMs), closes
   * the connections politely and returns the final stats. Safe to call more than once.
   */
  stop(): Promise<TrafficStats> {
    this.stopped ??= (async () => {
      this.controller.abort();
      clearInterval(this.churnTimer);
      await Promise.all(this.loops);
      await Promise.all(this.clients.map((client) => client.close()));
      return this.recorder.snapshot();
    })();
    return this.stopped;
  }

  private async run(): Promise<void> {
    const firsts: Array<Promise<void>> = [];
    const loopsPerClient = (client: TrafficClient): number => (client.protocol === 'http2' ? this.options.streamsPerSession : 1);
    for (const client of this.clients) {
      for (let n = 0; n < loopsPerClient(client); n += 1) {
        let onFirstDone = (): void => {};
        firsts.push(new Promise((resolve) => (onFirstDone = resolve)));
        const loop = this.lastSent.push(Number.NEGATIVE_INFINITY) - 1;
        const onRequestDone = (sentAt: number): void => {
          this.lastSent[loop] = sentAt;
          onFirstDone();
        };
        const options = { ...LOOP_BOUNDS, thinkTimeMs: this.options.thinkTimeMs, signal: this.controller.signal, onRequestDone };
        this.loops.push(runLoop(() => client.request(), options).finally(onFirstDone));
      }
    }
    if (this.options.reconnectEveryMs > 0) {
      let next = 0;
      this.churnTimer = setInterval(() => {
        this.clients[next % this.clients.length]?.reconnectWhenIdle();
        next += 1;
      }, this.options.reconnectEveryMs);
    }
    await Promise.all(firsts);
  }
}
