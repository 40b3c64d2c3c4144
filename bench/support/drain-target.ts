// The Envoy stand-in as a drain target for the benchmarks, in this process: one TCP listener
// (Envoy never closes TCP-proxy connections itself, so the bench decides when the last one
// closes), connections held open by this process, and the admin calls it receives timed on this
// process's clock.
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { type AdminCall, EnvoyStandIn, type EnvoyStandInOptions } from '../../test/support/envoy/stand-in.js';
import { until } from './processes.js';

export const TARGET_LISTENER = 'ingress';
const ACTIVE_GAUGE = `listener.${TARGET_LISTENER}.downstream_cx_active`;

export interface TimedCall extends AdminCall {
  /** performance.now() when the stand-in received the call. */
  readonly receivedAt: number;
}

export class DrainTarget {
  /** Every admin call, in order. */
  readonly calls: TimedCall[] = [];
  readonly #sockets: Socket[] = [];
  readonly #waiters: Array<{ path: string; resolve: (call: TimedCall) => void }> = [];

  private constructor(readonly envoy: EnvoyStandIn) {
    envoy.on('admin-call', (call) => {
      const timed = { ...call, receivedAt: performance.now() };
      this.calls.push(timed);
      for (const waiter of this.#waiters.filter((w) => w.path === call.path)) {
        this.#waiters.splice(this.#waiters.indexOf(waiter), 1);
        waiter.resolve(timed);
      }
    });
  }

  /** Envoy's own default stats flush (5 s) unless `options` says otherwise. */
  static async start(options: Omit<EnvoyStandInOptions, 'listeners'> = {}): Promise<DrainTarget> {
    const envoy = await EnvoyStandIn.start({ drainStrategy: 'immediate', ...options, listeners: [{ name: TARGET_LISTENER, kind: 'tcp', drainType: 'MODIFY_ONLY' }] });
    return new DrainTarget(envoy);
  }

  get adminAddress(): string {
    return this.envoy.adminAddress;
  }

  /** The live gauge, as Envoy holds it right now. */
  get active(): number {
    return this.envoy.stat(ACTIVE_GAUGE) ?? 0;
  }

  /** Times of the /stats reads received so far. */
  get reads(): number[] {
    return this.calls.filter((call) => call.path === '/stats').map((call) => call.receivedAt);
  }

  /** The next call to `path` (e.g. '/drain_listeners'). */
  nextCall(path: string): Promise<TimedCall> {
    return new Promise((resolve) => this.#waiters.push({ path, resolve }));
  }

  async open(count: number): Promise<void> {
    const expected = this.active + count;
    for (let n = 0; n < count; n += 1) {
      const socket = connect(this.envoy.listenerPort(TARGET_LISTENER), '127.0.0.1');
      socket.on('error', () => {});
      await once(socket, 'connect');
      this.#sockets.push(socket);
    }
    await until(() => this.active === expected, { what: 'the stand-in to count the new connections' });
  }

  /**
   * Closes `count` held connections; resolves with performance.now() at the moment the live gauge
   * shows them gone (checked on every turn of the event loop: the same clock as everything else).
   */
  close(count: number = this.#sockets.length): Promise<number> {
    const expected = this.active - count;
    for (const socket of this.#sockets.splice(0, count)) socket.destroy();
    return until(() => this.active === expected, { timeoutMs: 5_000, what: 'the gauge to drop' });
  }

  async stop(): Promise<void> {
    for (const socket of this.#sockets.splice(0)) socket.destroy();
    await this.envoy.close();
  }
}
