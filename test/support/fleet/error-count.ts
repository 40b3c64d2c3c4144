// What counts as an error in a fleet run, without vitest: the demo counts the same way.
import type { FleetOutput } from './fleet-run.js';

/** Every error any tool counted: hey's, the HTTP/1.1 and HTTP/2 clients', the long requests', HAProxy's. */
export function errorCount(out: FleetOutput): number {
  const { econ, eresp, wretr, wredis, srvAbrt, frontend5xx } = out.haproxy.totals;
  return (
    out.hey.failed +
    out.clients.http1.failures.length +
    out.clients.http2.failures.length +
    out.longRequests.failures.length +
    econ +
    eresp +
    wretr +
    wredis +
    srvAbrt +
    frontend5xx
  );
}
