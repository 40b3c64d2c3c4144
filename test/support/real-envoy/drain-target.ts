// What most CLI tests drain: real Envoy from the chart's bootstrap and flags, behind a recording
// admin tap, and a fresh ready-file path. Listeners: `ingress` (answers 200 to anything), `stats`
// (/stats/prometheus) and `ready` (health check on /ready), all HTTP, on ephemeral loopback ports.
import { join } from 'node:path';
import { tempDir } from '../cli.js';
import { pollUntil } from '../poll.js';
import { type AdminCall, type AdminFault, startAdminTap } from './admin-tap.js';
import { type ChartEnvoy, type ChartEnvoyOptions, startChartEnvoy } from './chart-envoy.js';
import { get, type RealEnvoy } from './process.js';

export interface DrainTarget<E extends RealEnvoy = ChartEnvoy> {
  readonly envoy: E;
  /** The tap's address: give this to the binary under test. */
  readonly adminAddress: string;
  /** Every admin request the binary made, in order, with Envoy's status. */
  readonly calls: readonly AdminCall[];
  listenerPort(name: string): number;
  /** One stat's current value, read straight from Envoy (not through the tap); undefined when absent. */
  stat(name: string): Promise<number | undefined>;
  /** Resolves once `predicate` holds for the stat; Envoy offers no push, so this polls its admin API. */
  waitForStat(name: string, predicate: (value: number | undefined) => boolean, timeoutMs?: number): Promise<void>;
  /** Envoy's `state` in /server_info: LIVE, DRAINING, ... */
  state(): Promise<string>;
  /** Faults the tap injects in front of Envoy (on `onlyPath` alone, when given); undefined ends them. */
  setAdminFault(fault: AdminFault | undefined, onlyPath?: string): void;
  /** Envoy dies at once (SIGKILL), as when its container is killed; the tap then resets every admin connection. */
  kill(): Promise<void>;
  /** Stops Envoy (SIGTERM) and the tap: afterwards the admin address refuses connections. */
  close(): Promise<void>;
}

export async function realEnvoyAndReadyFile(
  defer: (cleanup: () => unknown) => void,
  options: ChartEnvoyOptions = {},
): Promise<{ envoy: DrainTarget; ready: string }> {
  const envoy = await startDrainTarget(options);
  defer(() => envoy.close());
  const dir = tempDir();
  defer(dir.cleanup);
  return { envoy, ready: join(dir.path, 'ready') };
}

/** Real Envoy behind its tap; close() stops both. */
export async function startDrainTarget(options: ChartEnvoyOptions = {}): Promise<DrainTarget> {
  return drainTargetOf(await startChartEnvoy(options));
}

/** A started Envoy (of any bootstrap) behind a tap of its own; close() stops both. */
export async function drainTargetOf<E extends RealEnvoy>(envoy: E): Promise<DrainTarget<E>> {
  const tap = await startAdminTap(envoy.adminAddress).catch(async (error: unknown) => {
    await envoy.stop();
    throw error;
  });
  const stat = async (name: string): Promise<number | undefined> => {
    const answer = await get(envoy.adminAddress, `/stats?filter=^${name.replace(/\./g, '\\.')}$&format=json`);
    return (JSON.parse(answer.body) as { stats: Array<{ value: number }> }).stats[0]?.value;
  };
  const target: DrainTarget<E> = {
    envoy,
    adminAddress: tap.adminAddress,
    calls: tap.calls,
    listenerPort(name) {
      const port = envoy.ports[name];
      if (port === undefined) throw new Error(`no listener ${name}: ${Object.keys(envoy.ports).join(', ')}`);
      return port;
    },
    stat,
    async waitForStat(name, predicate, timeoutMs = 10_000) {
      let value: number | undefined;
      await pollUntil(
        `${name} as expected`,
        async () => {
          value = await stat(name);
          return predicate(value);
        },
        { timeoutMs, everyMs: 10, lastSeen: () => `still ${value}` },
      );
    },
    async state() {
      return (JSON.parse((await get(envoy.adminAddress, '/server_info')).body) as { state: string }).state;
    },
    setAdminFault: (fault, onlyPath) => tap.setFault(fault, onlyPath),
    async kill() {
      envoy.child.kill('SIGKILL');
      await envoy.exited;
    },
    async close() {
      await tap.close();
      await envoy.stop();
    },
  };
  return target;
}
