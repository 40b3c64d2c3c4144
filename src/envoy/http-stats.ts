// Reading the HTTP connection managers' request stats out of Envoy's /stats JSON. Pure: the admin
// client fetches, these decide what the numbers mean. They let a drain tell an idle keep-alive
// connection (no request in flight) from a busy one.
import { ADMIN_SCOPE, matchHttpStat } from './stat-names.js';
import type { Stat } from './stats.js';

export interface HttpCounts {
  /** HTTP connections of this connection manager (http.<prefix>.downstream_cx_active). */
  readonly connections: number;
  /** Requests in flight: HTTP/1.1 requests and HTTP/2 streams (downstream_rq_active). */
  readonly activeRequests: number;
  /** Requests ever received (downstream_rq_total): its growth means requests still arrive. */
  readonly requests: number;
}

const FIELD = { cx_active: 'connections', rq_active: 'activeRequests', rq_total: 'requests' } as const;

/**
 * Groups `http.<prefix>.downstream_(cx_active|rq_active|rq_total)` by stat prefix, leaving out the
 * admin API's own: our polling request lives there. Which listeners each one serves is the
 * pairing's business (pairing.ts).
 */
export function countByHttpPrefix(stats: readonly Stat[]): Map<string, HttpCounts> {
  const byPrefix = new Map<string, { -readonly [K in keyof HttpCounts]: number }>();
  for (const { name, value } of stats) {
    const match = matchHttpStat(name);
    if (match === null) continue;
    const prefix = match[1] as string;
    if (prefix === ADMIN_SCOPE) continue;
    let counts = byPrefix.get(prefix);
    if (counts === undefined) {
      counts = { connections: 0, activeRequests: 0, requests: 0 };
      byPrefix.set(prefix, counts);
    }
    counts[FIELD[match[2] as keyof typeof FIELD]] = value;
  }
  return byPrefix;
}
