// The real Envoy (the pinned 1.40.0) as a drain target for the benchmarks: one TCP-proxy listener
// (Envoy never closes TCP-proxy connections itself, so the bench decides when the last one closes)
// in front of a sink that holds every connection, Envoy's default 5 s stats flush, and its admin
// API reached through the tests' admin tap, which times every call on this process's clock.
import { once } from 'node:events';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { Bootstrap } from '../../test/support/chart/bootstrap.js';
import { type AdminCall, type AdminTap, startAdminTap } from '../../test/support/real-envoy/admin-tap.js';
import { get, type RealEnvoy, startRealEnvoy } from '../../test/support/real-envoy/process.js';
import { isStatsRead } from '../../test/support/stats-reads.js';
import { sleep } from './processes.js';

const TARGET_LISTENER = 'ingress';
const ACTIVE_GAUGE = `listener.${TARGET_LISTENER}.downstream_cx_active`;
/** The bench's own reads of Envoy's gauges go straight to the admin API, this often while waiting. */
const POLL_MS = 5;

export type TimedCall = AdminCall;

export class DrainTarget {
  readonly #sockets: Socket[] = [];
  readonly #waiters: Array<{ path: string; resolve: (call: TimedCall) => void }> = [];

  private constructor(
    private readonly envoy: RealEnvoy,
    private readonly tap: AdminTap,
    private readonly sink: Server,
  ) {
    tap.onCall((call) => {
      for (const waiter of this.#waiters.filter((w) => w.path === call.path)) {
        this.#waiters.splice(this.#waiters.indexOf(waiter), 1);
        waiter.resolve(call);
      }
    });
  }

  static async start(): Promise<DrainTarget> {
    const sink = createServer((socket) => socket.on('error', () => {}));
    await new Promise<void>((resolve) => sink.listen({ host: '127.0.0.1', port: 0 }, resolve));
    const sinkPort = (sink.address() as { port: number }).port;
    const envoy = await startRealEnvoy({ bootstrap: bootstrap(sinkPort), args: ['--drain-strategy', 'immediate', '--drain-time-s', '60'] });
    const tap = await startAdminTap(envoy.adminAddress);
    return new DrainTarget(envoy, tap, sink);
  }

  /** What the tool is given: the tap in front of Envoy's admin API. */
  get adminAddress(): string {
    return this.tap.adminAddress;
  }

  /** Every admin call the tool made, in order. */
  get calls(): readonly TimedCall[] {
    return this.tap.calls;
  }

  /** Times of the stats reads received so far. */
  get reads(): number[] {
    return this.tap.calls.filter(isStatsRead).map((call) => call.receivedAt);
  }

  /** A gauge or counter as Envoy reports it now (0 when absent). */
  async stat(name: string): Promise<number> {
    const escaped = name.replace(/\./g, '\\.');
    const { body } = await get(this.envoy.adminAddress, `/stats?filter=^${escaped}$&format=json`);
    return (JSON.parse(body) as { stats: Array<{ value?: number }> }).stats[0]?.value ?? 0;
  }

  active(): Promise<number> {
    return this.stat(ACTIVE_GAUGE);
  }

  /** Resolves with performance.now() once `stat` reads `value`. */
  async statReaches(name: string, value: number, timeoutMs = 10_000): Promise<number> {
    const deadline = performance.now() + timeoutMs;
    while ((await this.stat(name)) !== value) {
      if (performance.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${name} to read ${value}`);
      await sleep(POLL_MS);
    }
    return performance.now();
  }

  /** The next call to `path` (e.g. '/drain_listeners'). */
  nextCall(path: string): Promise<TimedCall> {
    return new Promise((resolve) => this.#waiters.push({ path, resolve }));
  }

  async open(count: number): Promise<void> {
    const expected = (await this.active()) + count;
    for (let n = 0; n < count; n += 1) {
      const socket = connect(this.envoy.ports[TARGET_LISTENER] as number, '127.0.0.1');
      socket.on('error', () => {});
      await once(socket, 'connect');
      this.#sockets.push(socket);
    }
    await this.statReaches(ACTIVE_GAUGE, expected);
  }

  /**
   * Closes `count` held connections; resolves with performance.now() when this process closed
   * them (time zero), once Envoy's live gauge shows them gone.
   */
  async close(count: number = this.#sockets.length): Promise<number> {
    const expected = (await this.active()) - count;
    const closedAt = performance.now();
    for (const socket of this.#sockets.splice(0, count)) socket.destroy();
    await this.statReaches(ACTIVE_GAUGE, expected, 5_000);
    return closedAt;
  }

  async stop(): Promise<void> {
    for (const socket of this.#sockets.splice(0)) socket.destroy();
    await this.tap.close();
    await this.envoy.stop();
    await new Promise<void>((resolve) => this.sink.close(() => resolve()));
  }
}

function bootstrap(sinkPort: number): Bootstrap {
  const loopback = (port: number) => ({ socket_address: { address: '127.0.0.1', port_value: port } });
  const config = {
    admin: { address: loopback(0) },
    static_resources: {
      listeners: [
        {
          name: TARGET_LISTENER,
          stat_prefix: TARGET_LISTENER,
          drain_type: 'MODIFY_ONLY',
          address: loopback(0),
          filter_chains: [
            {
              filters: [
                {
                  name: 'envoy.filters.network.tcp_proxy',
                  typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy', stat_prefix: 'hold', cluster: 'sink' },
                },
              ],
            },
          ],
        },
      ],
      clusters: [
        {
          name: 'sink',
          type: 'STATIC',
          connect_timeout: '1s',
          load_assignment: { cluster_name: 'sink', endpoints: [{ lb_endpoints: [{ endpoint: { address: loopback(sinkPort) } }] }] },
        },
      ],
    },
  };
  return config as unknown as Bootstrap;
}
