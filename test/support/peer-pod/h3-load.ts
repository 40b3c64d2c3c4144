// HTTP/3 to a QUIC listener of the pod, from inside the pod's network namespace (the bridge carries
// TCP only; the client still talks to the pod's loopback): requests back to back on one connection
// (a new one after a GOAWAY while the pod is still programmed), a long request in flight at time
// zero on a connection of its own, and a connection left idle after one answer.
import { setTimeout as sleep } from 'node:timers/promises';
import { connectH3, type H3Client, type H3Event } from '../protocols/h3.js';
import { Departure, LONG_REQUEST_MS, type SideContext, type SideLoad, type SideReport, THINK_MS } from './side-load.js';

const REQUEST_TIMEOUT_MS = 10_000;

/** One GET on the connection; resolves with its status once the body ended, rejects on a reset or a close. */
async function h3Get(client: H3Client, path: string, timeoutMs = REQUEST_TIMEOUT_MS): Promise<number> {
  const before = new Set<H3Event>(client.events);
  client.get(path);
  const sent = await client.waitFor((e) => !before.has(e) && e.event === 'sent', timeoutMs);
  const end = await client.waitFor(
    (e) =>
      (e.stream === sent.stream && (e.event === 'body_end' || e.event === 'stream_reset')) || (!before.has(e) && (e.event === 'closed' || e.event === 'error')),
    timeoutMs,
  );
  if (end.event !== 'body_end') throw new Error(`${path}: ${JSON.stringify(end)}`);
  return client.events.find((e) => e.event === 'response' && e.stream === sent.stream)?.status ?? 0;
}

const goneOrLeaving = (client: H3Client): boolean => client.events.some((e) => e.event === 'goaway' || e.event === 'closed');

export function h3Load(target: { readonly name: string; readonly inPod: number; readonly host: string }): (context: SideContext) => Promise<SideLoad> {
  return async (context) => {
    const connect = (): Promise<H3Client> => connectH3(target.inPod, target.host, context.podPid);
    const failures: string[] = [];
    const departure = new Departure();
    const clients: H3Client[] = [];
    const opened = async (): Promise<H3Client> => {
      const client = await connect();
      clients.push(client);
      return client;
    };

    const idle = await opened();
    const idleStatus = await h3Get(idle, '/');
    if (idleStatus !== 200) throw new Error(`${target.name}: the idle connection's request got ${idleStatus}`);

    let first: () => void = () => undefined;
    const answeredOnce = new Promise<void>((resolve) => (first = resolve));
    const loop = (async () => {
      let current: H3Client | undefined;
      for (let n = 0; departure.goOn(current !== undefined && !goneOrLeaving(current)); n += 1) {
        try {
          if (current === undefined || goneOrLeaving(current)) current = await opened();
          const status = await h3Get(current, '/');
          if (goneOrLeaving(current)) departure.told();
          if (status !== 200) throw new Error(`status ${status}`);
          departure.answered();
          first();
        } catch (error) {
          failures.push(`${target.name} request: ${(error as Error).message}`);
          current = undefined;
        }
        await sleep(THINK_MS);
      }
    })();

    let longAnswered = 0;
    const longClient = await opened();
    let long: Promise<void> = Promise.resolve();
    return {
      name: target.name,
      slowRequests: 1,
      idle: [{ closed: () => idle.events.some((e) => e.event === 'closed'), close: () => idle.close() }],
      ready: () => answeredOnce,
      startLong() {
        long = h3Get(longClient, `/slow/${LONG_REQUEST_MS}`, REQUEST_TIMEOUT_MS + LONG_REQUEST_MS).then(
          (status) => void (status === 200 ? (longAnswered = Date.now()) : failures.push(`${target.name} long request: status ${status}`)),
          (error: Error) => void failures.push(`${target.name} long request: ${error.message}`),
        );
      },
      terminationStarted: (zero, deprogrammedAt) => departure.start(zero, deprogrammedAt),
      async finish(): Promise<SideReport> {
        await Promise.all([loop, long]);
        return {
          name: target.name,
          failures,
          servedAfterDeletion: departure.served,
          busyUntil: Math.max(departure.lastAnswer, longAnswered),
          heldUntil: undefined,
          toldToLeaveAfterMs: departure.toldAfterMs(),
        };
      },
      async close() {
        await Promise.all(clients.map((client) => client.close()));
      },
    };
  };
}
