// `envoy-shutdown-manager status`: where Envoy and its drain stand, for an operator.
import { setTimeout as sleep } from 'node:timers/promises';
import { isEnvoyGone } from '../envoy/admin-client.js';
import type { ListenerCounts } from '../envoy/busy-connections.js';
import { describePairing, type PairingReport, pairedReading } from '../envoy/busy-connections.js';
import type { ConnectionReading, EnvoyControl } from '../envoy/envoy-control.js';
import { UNKNOWN_RESULT } from '../handoff/drain-result.js';
import { type DrainInProgress, type DrainStateReading, readDrainState } from '../handoff/drain-state.js';
import { type ReadyReport, readReadyReport } from '../handoff/ready-file.js';
import { ExitCode, errorMessage } from '../shared/errors.js';

export interface StatusReport {
  readonly at: string;
  readonly envoy:
    | { readonly reachable: true; readonly state: string; readonly healthCheck: 'passing' | 'failing' }
    | { readonly reachable: false; readonly error: string };
  /**
   * Counted as `shutdown` would count them, with the per-listener split when known. `total: null`
   * with `error`: Envoy answered, but not with a count (a `shutdown` would wait to its timeout).
   */
  readonly connections:
    | {
        readonly source: string;
        readonly total: number;
        readonly listeners?: Readonly<Record<string, number>>;
        /** Connections carrying a request, plus every one that cannot be told idle: what a drain ignoring idle connections counts. */
        readonly inFlight?: number;
        readonly pairing?: PairingReport;
      }
    | { readonly source: string; readonly total: null; readonly error: string }
    | null;
  /** New connections accepted on the counted listeners since the previous reading. */
  readonly newConnections: { readonly count: number; readonly intervalMs: number } | null;
  readonly drain:
    | ({ readonly inProgress: true; readonly elapsedMs: number; readonly minDrainLeftMs: number; readonly timeoutLeftMs: number } & DrainInProgress)
    | { readonly inProgress: false; readonly abandoned?: { readonly pid: number; readonly startedAt: string; readonly why: string } };
  readonly lastDrain: ReadyReport | { readonly result: typeof UNKNOWN_RESULT } | null;
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

export async function gatherStatus(
  from: StatusSource,
  baseline: Baseline | undefined,
  intervalMs: number,
  signal: AbortSignal,
): Promise<{ report: StatusReport; baseline: Baseline | undefined }> {
  const { readyFile } = from;
  const [drainState, lastDrain] = readyFile === undefined ? [undefined, undefined] : await Promise.all([readDrainState(readyFile), readReadyReport(readyFile)]);
  let envoy: StatusReport['envoy'] | undefined;
  let connections: StatusReport['connections'] = null;
  let next = baseline;
  let newConnections: StatusReport['newConnections'] = null;
  try {
    const state = await from.envoy.readServerState(signal);
    envoy = { reachable: true, state, healthCheck: state === 'DRAINING' ? 'failing' : 'passing' };
    if (next === undefined) {
      next = toBaseline(await from.envoy.readConnections(signal));
      await sleep(intervalMs, undefined, { signal });
    }
    const reading = await from.envoy.readConnections(signal);
    const busy = pairedReading(reading)?.busy;
    connections = {
      source: from.source,
      total: reading.connections,
      ...(reading.listeners === undefined ? {} : { listeners: activeByListener(reading.listeners) }),
      ...(busy === undefined || reading.pairing === undefined ? {} : { inFlight: busy, pairing: describePairing(reading.pairing) }),
    };
    const current = toBaseline(reading);
    if (next !== undefined && current !== undefined) {
      newConnections = { count: Math.max(0, current.accepted - next.accepted), intervalMs: current.at - next.at };
    }
    next = current;
  } catch (error) {
    if (signal.aborted) throw error;
    if (envoy === undefined || isEnvoyGone(error)) {
      envoy = { reachable: false, error: errorMessage(error) };
    } else {
      // Envoy answers, just not with a count: say so, never print a number that was not read.
      connections = { source: from.source, total: null, error: errorMessage(error) };
    }
  }
  const now = Date.now();
  return {
    baseline: next,
    report: {
      at: new Date(now).toISOString(),
      envoy,
      connections,
      newConnections,
      drain: drainReport(drainState, now),
      lastDrain: lastDrain === undefined ? null : lastDrain === 'unreadable' ? { result: UNKNOWN_RESULT } : lastDrain,
    },
  };
}

/** A report's exit code: unreachable (1) and an unknown count (3) apart, so a script tells them apart too. */
export function statusExitCode(report: StatusReport): ExitCode {
  if (!report.envoy.reachable) return ExitCode.EnvoyUnreachable;
  return report.connections?.total === null ? ExitCode.CountUnknown : ExitCode.Success;
}

function drainReport(reading: DrainStateReading | undefined, now: number): StatusReport['drain'] {
  if (reading?.kind === 'running') return { inProgress: true, ...reading.state, ...remaining(reading.state, now) };
  if (reading?.kind === 'abandoned') return { inProgress: false, abandoned: { pid: reading.state.pid, startedAt: reading.state.startedAt, why: reading.why } };
  return { inProgress: false };
}

/** Listeners whose live gauge was read (in `total` mode, one without it is merely left out). */
function activeByListener(listeners: ReadonlyMap<string, ListenerCounts>): Record<string, number> {
  // No prototype: a listener may be named anything, `__proto__` included.
  const active = Object.create(null) as Record<string, number>;
  for (const [name, counts] of listeners) if (counts.active !== undefined) active[name] = counts.active;
  return active;
}

function toBaseline(reading: ConnectionReading): Baseline | undefined {
  return reading.accepted === undefined ? undefined : { accepted: reading.accepted, at: Date.now() };
}

function remaining(state: DrainInProgress, now: number): { elapsedMs: number; minDrainLeftMs: number; timeoutLeftMs: number } {
  const elapsedMs = Math.max(0, now - Date.parse(state.startedAt));
  return { elapsedMs, minDrainLeftMs: Math.max(0, state.minDrainMs - elapsedMs), timeoutLeftMs: Math.max(0, state.drainTimeoutMs - elapsedMs) };
}
