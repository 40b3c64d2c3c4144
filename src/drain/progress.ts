// The drain loop's bookkeeping, pure: `observe` folds one reading of Envoy's counts into the
// state, `decide` says whether the drain is over. Both return the log lines the moment calls
// for, so the loop only fetches, observes, logs and sleeps, and tests drive a whole drain
// reading by reading without a clock or a socket.

import { describePairing, type Pairing } from '../envoy/busy-connections.js';
import type { ConnectionReading, ConnectionSource } from '../envoy/envoy-control.js';
import type { DrainResult } from '../handoff/drain-result.js';
import { countToDecideOn, inFlight, liveConnections, requestsReceived } from './count.js';
import { type DrainPolicy, decideDrain, earliestFinishMs, envoyGone, newConnectionsBetween } from './policy.js';

export interface ProgressOptions extends DrainPolicy {
  readonly connections: ConnectionSource;
  readonly ignoreIdleConnections: boolean;
}

/** One outcome of reading Envoy's counts, at `elapsedMs` since the drain began. */
export type Reading =
  | { readonly elapsedMs: number; readonly counts: ConnectionReading }
  /** `refused`: nothing listening (refused, or cut before any answer); any other failure means the count is unknown. */
  | { readonly elapsedMs: number; readonly failed: string; readonly refused: boolean };

/** A log line the loop writes: pure functions decide what to say, the loop says it. */
export interface DrainLogLine {
  readonly level: 'debug' | 'info' | 'warn' | 'error';
  readonly fields: Readonly<Record<string, unknown>>;
  readonly msg: string;
}

export interface DrainState {
  /** The count to decide on from the last reading; undefined when unknown. */
  readonly connections: number | undefined;
  /** While the total gauge is older than the drain: the most it and the live gauges say; never decided on. */
  readonly unconfirmed: number | undefined;
  /** Reported (progress line, the ready file) as what is known; null when unknown. */
  readonly lastCount: number | null;
  readonly refusedReads: number;
  readonly lastError: string | undefined;
  /** When a new connection (or, ignoring idle ones, a new request) was last seen; 0: none since the drain began. */
  readonly lastNewConnectionMs: number;
  readonly accepted: number | undefined;
  readonly requests: number | undefined;
  /** server.uptime at the first good reading: a total gauge is trusted only from a later flush. */
  readonly flushBaselineS: number | undefined;
  /** The pairing of listeners and connection managers last reported, to say once when it changes. */
  readonly pairing: Pairing | undefined;
  /** The last good reading counted only the connections with a request in flight (idle ones ignored). */
  readonly countingRequests: boolean;
  readonly lastProgressAt: number;
  /** One-time log lines already written. */
  readonly said: ReadonlySet<'minimum' | 'quiet' | 'idle' | 'flush-wait'>;
  /** The GET the last good reading was made with: the log says when it changes, and what it costs Envoy. */
  readonly readPath: string | undefined;
  /** The lines the last observe or decide call asks the loop to write. */
  readonly events: readonly DrainLogLine[];
}

export type Decision = { readonly kind: 'continue' } | { readonly kind: 'done'; readonly reason: DrainResult };

export const INITIAL_STATE: DrainState = {
  connections: undefined,
  unconfirmed: undefined,
  lastCount: null,
  refusedReads: 0,
  lastError: undefined,
  lastNewConnectionMs: 0,
  accepted: undefined,
  requests: undefined,
  flushBaselineS: undefined,
  pairing: undefined,
  readPath: undefined,
  countingRequests: false,
  lastProgressAt: -Infinity,
  said: new Set(),
  events: [],
};

export function observe(options: ProgressOptions, state: DrainState, reading: Reading): DrainState {
  if (!('counts' in reading)) return observeFailure(state, reading);
  const { counts } = reading;
  const elapsedMs = Math.round(reading.elapsedMs);
  const events: DrainLogLine[] = [];
  if (counts.pairing !== undefined && counts.pairing.key !== state.pairing?.key) events.push(pairingEvent(counts.pairing, elapsedMs));
  const said = new Set(state.said);
  if (counts.read.path !== state.readPath) {
    const why = counts.read.textBecause === undefined ? {} : { why: counts.read.textBecause };
    const read = `GET ${counts.read.path.slice(0, counts.read.path.indexOf('filter='))}filter=…`;
    events.push({
      level: 'info',
      fields: { read, envoyMs: Number(counts.read.priceMs.toFixed(2)), ...why, elapsedMs },
      msg: "reading envoy's stats with this request: what it costs envoy's main thread, at most",
    });
  }
  const flushBaselineS = state.flushBaselineS ?? counts.uptimeS;
  const arrivals = options.quietPeriodMs > 0 ? noteArrivals(options, state, reading) : undefined;
  if (arrivals?.restarted !== undefined) {
    said.delete('quiet');
    events.push(arrivals.restarted);
  }
  const lastNewConnectionMs = arrivals?.lastNewConnectionMs ?? state.lastNewConnectionMs;
  const idleIgnored = options.ignoreIdleConnections && reading.elapsedMs >= earliestFinishMs(options, lastNewConnectionMs);
  const connections = countToDecideOn(counts, { source: options.connections, flushBaselineS, idleIgnored });
  if (idleIgnored && !said.has('idle')) {
    events.push({
      level: 'info',
      fields: { connections: counts.connections, inFlight: inFlight(counts) ?? null, elapsedMs },
      msg: 'no request for the quiet period: counting only connections with a request in flight',
    });
    said.add('idle');
  }
  let unconfirmed: number | undefined;
  if (connections === undefined && counts.uptimeS !== undefined) {
    unconfirmed = Math.max(counts.connections, liveConnections(counts));
    if (!said.has('flush-wait')) {
      events.push({
        level: 'info',
        fields: { totalConnections: counts.connections, uptimeS: counts.uptimeS, elapsedMs },
        msg: 'waiting for a stats flush after the drain began: server.total_connections is older',
      });
      said.add('flush-wait');
    }
  }
  return {
    ...state,
    connections,
    unconfirmed,
    lastCount: connections ?? unconfirmed ?? null,
    refusedReads: 0,
    lastError: undefined,
    lastNewConnectionMs,
    accepted: arrivals?.accepted ?? state.accepted,
    requests: arrivals?.requests ?? state.requests,
    flushBaselineS,
    pairing: counts.pairing ?? state.pairing,
    readPath: counts.read.path,
    countingRequests: idleIgnored,
    said,
    events,
  };
}

/** A read that failed. Unknown is not zero: the drain goes on, and can now end only at its timeout or a later good read. */
function observeFailure(state: DrainState, reading: { readonly elapsedMs: number; readonly failed: string; readonly refused: boolean }): DrainState {
  const refusedReads = reading.refused ? state.refusedReads + 1 : 0;
  const fields = { err: reading.failed, elapsedMs: Math.round(reading.elapsedMs) };
  const events: DrainLogLine[] = [];
  if (!envoyGone(refusedReads)) {
    if (refusedReads > 0) events.push({ level: 'warn', fields: { ...fields, refusedReads }, msg: 'could not reach envoy: checking whether it exited' });
    else events.push({ level: 'warn', fields, msg: 'connection count unknown: still waiting (unknown is not zero)' });
  }
  return { ...state, connections: undefined, unconfirmed: undefined, lastCount: null, refusedReads, lastError: reading.failed, events };
}

/** With a quiet period: the connections (and, ignoring idle ones, the requests) that arrived since the last read restart it. */
function noteArrivals(
  options: ProgressOptions,
  state: DrainState,
  { elapsedMs, counts }: { readonly elapsedMs: number; readonly counts: ConnectionReading },
): Pick<DrainState, 'lastNewConnectionMs' | 'accepted' | 'requests'> & { readonly restarted?: DrainLogLine } {
  const freshConnections = counts.accepted === undefined ? 0 : newConnectionsBetween(state.accepted, counts.accepted);
  const accepted = counts.accepted ?? state.accepted;
  const received = options.ignoreIdleConnections ? requestsReceived(counts) : undefined;
  const freshRequests = received === undefined ? 0 : newConnectionsBetween(state.requests, received);
  const requests = received ?? state.requests;
  if (freshConnections === 0 && freshRequests === 0) return { lastNewConnectionMs: state.lastNewConnectionMs, accepted, requests };
  const fields = {
    newConnections: freshConnections,
    ...(options.ignoreIdleConnections ? { newRequests: freshRequests } : {}),
    elapsedMs: Math.round(elapsedMs),
  };
  const msg = freshConnections > 0 ? 'new connections arrived: quiet period restarted' : 'new requests arrived: quiet period restarted';
  return { lastNewConnectionMs: elapsedMs, accepted, requests, restarted: { level: 'info', fields, msg } };
}

function pairingEvent(pairing: Pairing, elapsedMs: number): DrainLogLine {
  if (pairing.unknown !== undefined)
    return { level: 'warn', fields: { why: pairing.unknown, elapsedMs }, msg: "listeners' connection managers unknown: every connection counts as busy" };
  return {
    level: 'info',
    fields: { listeners: describePairing(pairing).listeners, elapsedMs },
    msg: "listeners paired with their connection managers from envoy's stats",
  };
}

/** Whether the drain is over at `elapsedMs`, with the milestone and progress lines due now. */
export function decide(options: ProgressOptions, state: DrainState, elapsedMs: number): { readonly decision: Decision; readonly state: DrainState } {
  const { connections } = state;
  const fields = { connections, elapsedMs: Math.round(elapsedMs) };
  if (envoyGone(state.refusedReads)) {
    const event: DrainLogLine = {
      level: 'error',
      fields: { err: state.lastError, elapsedMs: fields.elapsedMs, refusedReads: state.refusedReads },
      msg: 'envoy is gone: its admin API refuses or drops every connection, so its connections are closed too',
    };
    return { decision: { kind: 'done', reason: 'envoy-unreachable' }, state: { ...state, events: [event] } };
  }
  const events: DrainLogLine[] = [];
  const said = new Set(state.said);
  if (!said.has('minimum') && elapsedMs >= options.minDrainMs) {
    events.push({ level: 'info', fields, msg: 'minimum drain period reached' });
    said.add('minimum');
  }
  if (options.quietPeriodMs > 0 && !said.has('quiet') && elapsedMs >= state.lastNewConnectionMs + options.quietPeriodMs) {
    events.push({
      level: 'info',
      fields: { ...fields, quietForMs: Math.round(elapsedMs - state.lastNewConnectionMs) },
      msg: 'quiet period reached: no new connections',
    });
    said.add('quiet');
  }
  const verdict = decideDrain(options, { elapsedMs, connections, lastNewConnectionMs: state.lastNewConnectionMs, refusedReads: state.refusedReads });
  if (verdict === 'drained') {
    events.push({ level: 'info', fields, msg: 'drain completed' });
    return { decision: { kind: 'done', reason: 'drained' }, state: { ...state, said, events } };
  }
  if (verdict === 'timeout') {
    events.push({ level: 'warn', fields: { ...fields, connections: connections ?? null }, msg: 'drain timeout exceeded' });
    return { decision: { kind: 'done', reason: 'timeout' }, state: { ...state, said, events } };
  }
  let { lastProgressAt } = state;
  if (connections !== undefined || state.unconfirmed !== undefined) {
    // One progress line per check interval; the faster end-game reads only at debug level.
    if (elapsedMs - lastProgressAt >= options.checkIntervalMs) {
      events.push({
        level: 'info',
        fields: connections === undefined ? { ...fields, connections: state.unconfirmed, statsFlushPending: true } : fields,
        msg: 'draining',
      });
      lastProgressAt = elapsedMs;
    } else {
      events.push({ level: 'debug', fields, msg: 'connections read' });
    }
  }
  return { decision: { kind: 'continue' }, state: { ...state, said, lastProgressAt, events } };
}
