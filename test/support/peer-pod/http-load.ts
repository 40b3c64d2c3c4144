// HTTP/1.1 to one of the pod's listeners, in clear or over TLS with SNI (the peers' HTTPS
// listeners pick their filter chain by SNI and their virtual host by Host): a keep-alive client
// sending requests back to back, a long request in flight at time zero on a connection of its own,
// and a pooled connection left idle after one answer.
import { Agent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { http1Request, idleHttp1, problem, REQUEST_TIMEOUT_MS } from '../protocols/clients.js';
import { runLoop } from '../traffic/request-loop.js';
import { Departure, LONG_REQUEST_MS, type SideContext, type SideLoad, type SideReport, THINK_MS } from './side-load.js';

export interface HttpTarget {
  readonly name: string;
  /** The listener's port in the pod. */
  readonly inPod: number;
  /** The Host header (a virtual host of the listener's routes). */
  readonly host: string;
  /** TLS with this SNI; clear text without. */
  readonly servername?: string;
}

export function httpLoad(target: HttpTarget): (context: SideContext) => Promise<SideLoad> {
  return async (context) => {
    const port = context.port(target.inPod);
    const tls = target.servername === undefined ? {} : { servername: target.servername };
    const get = (path: string, agent: Agent | false, timeoutMs = REQUEST_TIMEOUT_MS) =>
      http1Request({ port, path, agent, headers: { host: target.host }, timeoutMs, ...tls });
    const failures: string[] = [];

    const idle = await idleHttp1(port, '/', { ...tls, host: target.host });

    const departure = new Departure();
    let firstAnswer: () => void = () => undefined;
    const answeredOnce = new Promise<void>((resolve) => (firstAnswer = resolve));
    const pool = { keepAlive: true, maxSockets: 1 };
    const loopAgent = target.servername === undefined ? new Agent(pool) : new HttpsAgent({ ...pool, servername: target.servername, rejectUnauthorized: false });
    let open = false;
    const loop = runLoop(
      async () => {
        const answer = await get('/', loopAgent);
        open = answer.status !== 0 && answer.connection !== 'close';
        if (answer.status !== 0 && !open) departure.told();
        const wrong = problem(answer);
        if (wrong !== undefined) {
          failures.push(`${target.name} request: ${wrong}`);
          return false;
        }
        departure.answered();
        firstAnswer();
        return true;
      },
      { thinkTimeMs: THINK_MS, goOn: () => departure.goOn(open) },
    ).finally(() => loopAgent.destroy());

    let longAnswered = 0;
    let long: Promise<void> = Promise.resolve();
    return {
      name: target.name,
      slowRequests: 1,
      idle: [idle],
      ready: () => answeredOnce,
      startLong() {
        long = get(`/slow/${LONG_REQUEST_MS}`, false, REQUEST_TIMEOUT_MS + LONG_REQUEST_MS).then((answer) => {
          const wrong = problem(answer);
          if (wrong === undefined) longAnswered = Date.now();
          else failures.push(`${target.name} long request: ${wrong}`);
        });
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
        loopAgent.destroy();
        await idle.close();
      },
    };
  };
}
