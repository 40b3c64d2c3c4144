// Which number a drain decides on, from one reading of Envoy's stats. Pure: no clock, no I/O.

import { pairedReading } from '../envoy/busy-connections.js';
import type { ConnectionReading, ConnectionSource } from '../envoy/envoy-control.js';

export interface CountContext {
  readonly source: ConnectionSource;
  /**
   * With `total`: server.uptime at the first reading after the drain began. Envoy recomputes
   * server.total_connections only at a stats flush (and reports 0 until the first one), so the gauge
   * is trusted only once uptime has moved past this: a flush happened after the drain began.
   */
  readonly flushBaselineS: number | undefined;
  /** Idle connections no longer hold the drain: count only those with a request in flight. */
  readonly idleIgnored: boolean;
}

/** The count to decide on; undefined when the reading cannot tell (a `total` gauge older than the drain). */
export function countToDecideOn(reading: ConnectionReading, context: CountContext): number | undefined {
  if (context.idleIgnored && reading.listeners !== undefined && reading.http !== undefined) return inFlight(reading);
  // Live gauges (`listeners`, and the HTTP managers' `http`) need no flush.
  if (context.source !== 'total') return reading.connections;
  const flushed = reading.uptimeS !== undefined && context.flushBaselineS !== undefined && reading.uptimeS > context.flushBaselineS;
  if (!flushed) return undefined;
  // A connection opened since the flush is only in the live gauges.
  return Math.max(reading.connections, liveConnections(reading));
}

/** The live listener gauges' sum, a floor: gauges Envoy did not report (and a reading without any) add 0. */
export function liveConnections(reading: ConnectionReading): number {
  return reading.listeners === undefined ? 0 : sumOf(reading.listeners, (l) => l.active ?? 0);
}

/**
 * Connections that still carry work: requests in flight (an HTTP/2 stream counts as one) plus every
 * connection that cannot be told idle, as the pairing of listeners and connection managers says
 * (busy-connections.ts). Without a pairing, every connection.
 */
export function inFlight(reading: ConnectionReading): number | undefined {
  if (reading.listeners === undefined) return undefined;
  if (reading.pairing === undefined || reading.http === undefined) return liveOrUnknown(reading.listeners);
  return pairedReading(reading)?.busy;
}

/** Requests ever received by the connection managers of the counted listeners: its growth means requests still arrive. */
export function requestsReceived(reading: ConnectionReading): number | undefined {
  return pairedReading(reading)?.requests;
}

/** A listener without its live gauge: the count is unknown, never a guess. */
function liveOrUnknown(listeners: NonNullable<ConnectionReading['listeners']>): number | undefined {
  let count = 0;
  for (const { active } of listeners.values()) {
    if (active === undefined) return undefined;
    count += active;
  }
  return count;
}

function sumOf<T>(map: ReadonlyMap<string, T>, value: (item: T) => number): number {
  let total = 0;
  for (const item of map.values()) total += value(item);
  return total;
}
