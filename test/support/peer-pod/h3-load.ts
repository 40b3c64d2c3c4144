// HTTP/3 to a QUIC listener of the pod, from inside the pod's network namespace (the bridge carries
// TCP only; the client still talks to the pod's loopback): requests back to back on one connection
// (a new one after a GOAWAY while the pod is still programmed), a long request in flight at time
// zero on a connection of its own, and a connection left idle after one answer.
import { REQUEST_TIMEOUT_MS } from '../protocols/clients.js';
import { connectH3, type H3Client } from '../protocols/h3.js';
import { runLoop } from '../traffic/request-loop.js';
import { Departure, LONG_REQUEST_MS, type SideContext, type SideLoad, type SideReport, THINK_MS } from './side-load.js';

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
    const idleStatus = await idle.request('/');
    if (idleStatus !== 200) throw new Error(`${target.name}: the idle connection's request got ${idleStatus}`);

    let first: () => void = () => undefined;
    const answeredOnce = new Promise<void>((resolve) => (first = resolve));
    let current: H3Client | undefined;
    const loop = runLoop(
      async () => {
        try {
          if (current === undefined || goneOrLeaving(current)) current = await opened();
          const status = await current.request('/', REQUEST_TIMEOUT_MS);
          if (goneOrLeaving(current)) departure.told();
          if (status !== 200) throw new Error(`status ${status}`);
          departure.answered();
          first();
          return true;
        } catch (error) {
          failures.push(`${target.name} request: ${(error as Error).message}`);
          current = undefined;
          return false;
        }
      },
      { thinkTimeMs: THINK_MS, goOn: () => departure.goOn(current !== undefined && !goneOrLeaving(current)) },
    );

    let longAnswered = 0;
    const longClient = await opened();
    let long: Promise<void> = Promise.resolve();
    return {
      name: target.name,
      slowRequests: 1,
      idle: [{ closed: () => idle.events.some((e) => e.event === 'closed'), close: () => idle.close() }],
      ready: () => answeredOnce,
      startLong() {
        long = longClient.request(`/slow/${LONG_REQUEST_MS}`, REQUEST_TIMEOUT_MS + LONG_REQUEST_MS).then(
          (status) => {
            if (status === 200) longAnswered = Date.now();
            else failures.push(`${target.name} long request: status ${status}`);
          },
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
