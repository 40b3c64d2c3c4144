// What a drain's Event on the pod says: type, reason and message, from the drain's report. Pure.
import { type DrainResult, isDrainResult } from '../handoff/drain-result.js';
import { type ReadyReport, releaseDelay } from '../handoff/ready-file.js';

type EventType = 'Normal' | 'Warning';

export interface DrainEvent {
  readonly type: EventType;
  readonly reason: 'EnvoyDrained' | 'EnvoyDrainTimeout' | 'EnvoyDrainUnknownCount' | 'EnvoyUnreachable' | 'EnvoyDrainUnreported';
  readonly message: string;
}

/**
 * `report` as the ready file holds it ('unreadable': a file that is not a report); `releasedAt`:
 * when Envoy was released (epoch ms). The message says how long after the last connection was
 * seen closed that was, when the report says when, else how long after the drain ended.
 */
export function drainEvent(report: ReadyReport | 'unreadable', releasedAt: number, disruption?: string): DrainEvent {
  const event = describe(report, releasedAt);
  // Why the pod was terminated, when Kubernetes says (its DisruptionTarget condition): a rollout's deletion carries none.
  return disruption === undefined ? event : { ...event, message: `${event.message}; pod terminated for ${disruption}` };
}

function describe(report: ReadyReport | 'unreadable', releasedAt: number): DrainEvent {
  if (report === 'unreadable') {
    return { type: 'Warning', reason: 'EnvoyDrainUnreported', message: 'Envoy released: the ready file holds no drain report' };
  }
  const released = releaseLine(report, releasedAt);
  if (!isDrainResult(report.result)) {
    return { type: 'Warning', reason: 'EnvoyDrainUnreported', message: `Envoy released: the ready file reports an unknown result, ${released}` };
  }
  const took = `after ${seconds(report.elapsedMs)}`;
  const left =
    report.connections === null ? 'connection count unknown' : `${report.connections} ${report.connections === 1 ? 'connection' : 'connections'} left`;
  return EVENTS[report.result]({ report, took, left, released });
}

interface EventFacts {
  readonly report: ReadyReport;
  /** `after 4.1 s` */
  readonly took: string;
  /** `2 connections left`, or that the count is unknown. */
  readonly left: string;
  /** When Envoy was released, relative to the drain. */
  readonly released: string;
}

/** Each result's Event. */
const EVENTS: Readonly<Record<DrainResult, (facts: EventFacts) => DrainEvent>> = {
  drained: ({ report, left, released }) => ({
    type: 'Normal',
    reason: 'EnvoyDrained',
    message: `drained in ${seconds(report.elapsedMs)}, ${left}, ${released}`,
  }),
  // Unknown is not zero: a timeout without a count is its own reason, so an alert can tell them apart.
  timeout: ({ report, took, left, released }) =>
    report.connections === null
      ? {
          type: 'Warning',
          reason: 'EnvoyDrainUnknownCount',
          message: `drain timed out ${took} with the connection count unknown (unknown is not zero), ${released}`,
        }
      : { type: 'Warning', reason: 'EnvoyDrainTimeout', message: `drain timed out ${took}, ${left}, ${released}` },
  'envoy-unreachable': ({ took, left, released }) => ({
    type: 'Warning',
    reason: 'EnvoyUnreachable',
    message: `Envoy's admin API unreachable ${took}: no drain (or Envoy exited during it), ${left}, ${released}`,
  }),
};

function releaseLine(report: ReadyReport, releasedAt: number): string {
  const delay = releaseDelay(report, releasedAt);
  if (delay === undefined) return 'Envoy released';
  return `Envoy released ${delay.ms} ms after ${delay.since === 'last-connection' ? 'its last connection was seen closed' : 'the drain ended'}`;
}

/** `4.1 s`, `0.05 s`, `62 s`: what a person reads in `kubectl get events`. */
function seconds(ms: number): string {
  const s = ms / 1000;
  return `${s >= 10 ? Math.round(s) : Number(s.toPrecision(2))} s`;
}
