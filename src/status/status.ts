// `envoy-shutdown-manager status`: where Envoy and its drain stand, for an operator.
import { setTimeout as sleep } from 'node:timers/promises';
import { readDrainState, type DrainInProgress } from '../drain-state.js';
import type { ConnectionReading, EnvoyControl } from '../envoy/envoy-control.js';
import { errorMessage } from '../errors.js';
import { readReadyReport, type ReadyReport } from '../ready-file.js';

export interface StatusReport {
  readonly at: string;
  readonly envoy: { readonly reachable: true; readonly state: string; readonly healthCheck: 'passing' | 'failing' } | { readonly reachable: false; readonly error: string };
  /** Counted as `shutdown` would count them, with the per-listener split when known. */
  readonly connections: { readonly source: string; readonly total: number; readonly listeners?: Readonly<Record<string, number>> } | null;
  /** New connections accepted on the counted listeners since the previous reading. */
  readonly newConnections: { readonly count: number; readonly intervalMs: number } | null;
  readonly drain: ({ readonly inProgress: true; readonly elapsedMs: number; readonly minDrainLeftMs: number; readonly timeoutLeftMs: number } & DrainInProgress) | { readonly inProgress: false };
  readonly lastDrain: ReadyReport | { readonly result: 'unknown' } | null;
}

export interface StatusSource {
  readonly envoy: EnvoyControl;
  /** Undefined: no drain state nor last drain to report. */
  readonly readyFile: string | undefined;
  readonly source: string;
}

/** A previous reading to compute new connections from; the first report waits one interval for it. */
export interface Baseline {
  readonly accepted: number;
  readonly at: number;
}

export async function gatherStatus(from: StatusSource, baseline: Baseline | undefined, intervalMs: number, signal: AbortSignal): Promise<{ report: StatusReport; baseline: Baseline | undefined }> {
  const { readyFile } = from;
  const [drainState, lastDrain] = readyFile === undefined ? [undefined, undefined] : await Promise.all([readDrainState(readyFile), readReadyReport(readyFile)]);
  let envoy: StatusReport['envoy'];
  let reading: ConnectionReading | undefined;
  let next = baseline;
  let newConnections: StatusReport['newConnections'] = null;
  try {
    const state = await from.envoy.readServerState(signal);
    envoy = { reachable: true, state, healthCheck: state === 'DRAINING' ? 'failing' : 'passing' };
    if (next === undefined) {
      next = toBaseline(await from.envoy.readConnections(signal));
      await sleep(intervalMs, undefined, { signal });
    }
    reading = await from.envoy.readConnections(signal);
    const current = toBaseline(reading);
    if (next !== undefined && current !== undefined) {
      newConnections = { count: Math.max(0, current.accepted - next.accepted), intervalMs: current.at - next.at };
    }
    next = current;
  } catch (error) {
    if (signal.aborted) throw error;
    envoy = { reachable: false, error: errorMessage(error) };
  }
  const now = Date.now();
  return {
    baseline: next,
    report: {
      at: new Date(now).toISOString(),
      envoy,
      connections: reading === undefined ? null : { source: from.source, total: reading.connections, ...(reading.listeners === undefined ? {} : { listeners: Object.fromEntries([...reading.listeners].map(([name, counts]) => [name, counts.active])) }) },
      newConnections,
      drain: drainState === undefined ? { inProgress: false } : { inProgress: true, ...drainState, ...remaining(drainState, now) },
      lastDrain: lastDrain === undefined ? null : lastDrain === 'unreadable' ? { result: 'unknown' } : lastDrain,
    },
  };
}

function toBaseline(reading: ConnectionReading): Baseline | undefined {
  return reading.accepted === undefined ? undefined : { accepted: reading.accepted, at: Date.now() };
}

function remaining(state: DrainInProgress, now: number): { elapsedMs: number; minDrainLeftMs: number; timeoutLeftMs: number } {
  const elapsedMs = Math.max(0, now - Date.parse(state.startedAt));
  return { elapsedMs, minDrainLeftMs: Math.max(0, state.minDrainMs - elapsedMs), timeoutLeftMs: Math.max(0, state.drainTimeoutMs - elapsedMs) };
}
