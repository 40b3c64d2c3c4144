// HTTP/1.1 to one of the pod's listeners, in clear or over TLS with SNI (the peers' HTTPS
// listeners pick their filter chain by SNI and their virtual host by Host): a keep-alive client
// sending requests back to back, a long request in flight at time zero on a connection of its own,
// and a pooled connection left idle after one answer.
import { Agent, type ClientRequest, type IncomingMessage, request } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
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

const REQUEST_TIMEOUT_MS = 10_000;

export function httpLoad(target: HttpTarget): (context: SideContext) => Promise<SideLoad> {
  return async (context) => {
    const port = context.port(target.inPod);
    const agentOf = (): Agent =>
      target.servername === undefined
        ? new Agent({ keepAlive: true, maxSockets: 1 })
        : new HttpsAgent({ keepAlive: true, maxSockets: 1, servername: target.servername, rejectUnauthorized: false });
    const get = (path: string, agent: Agent | false): Promise<IncomingMessage & { body: string; socket: Socket }> =>
      new Promise((resolve, reject) => {
        const options = {
          host: '127.0.0.1',
          port,
          path,
          agent,
          headers: { host: target.host },
          timeout: REQUEST_TIMEOUT_MS,
          servername: target.servername,
          rejectUnauthorized: false,
        };
        const req: ClientRequest = (target.servername === undefined ? request : httpsRequest)(options, (res) => {
          let body = '';
          res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
          res.on('end', () => resolve(Object.assign(res, { body, socket: req.socket as Socket })));
          res.on('error', reject);
        });
        req.on('timeout', () => req.destroy(new Error(`no answer in ${REQUEST_TIMEOUT_MS} ms`)));
        req.on('error', reject);
        req.end();
      });
    const failures: string[] = [];
    const answered = (res: IncomingMessage & { body: string }, what: string): boolean => {
      if (res.statusCode === 200 && res.body === 'ok\n') return true;
      failures.push(`${target.name} ${what}: status ${res.statusCode}, body ${JSON.stringify(res.body.slice(0, 80))}`);
      return false;
    };

    const idleAgent = agentOf();
    const idleSocket = (await get('/', idleAgent)).socket;
    const idle = { closed: () => idleSocket.destroyed, close: async () => void idleAgent.destroy() };

    const departure = new Departure();
    let firstAnswer: () => void = () => undefined;
    const answeredOnce = new Promise<void>((resolve) => (firstAnswer = resolve));
    const loopAgent = agentOf();
    const loop = (async () => {
      let open = false;
      while (departure.goOn(open)) {
        try {
          const res = await get('/', loopAgent);
          open = res.headers.connection !== 'close';
          if (!open) departure.told();
          if (answered(res, 'request')) {
            departure.answered();
            firstAnswer();
          }
        } catch (error) {
          failures.push(`${target.name} request: ${(error as Error).message}`);
          open = false;
        }
        await sleep(THINK_MS);
      }
      loopAgent.destroy();
    })();

    let longAnswered = 0;
    let long: Promise<void> = Promise.resolve();
    return {
      name: target.name,
      slowRequests: 1,
      idle: [idle],
      ready: () => answeredOnce,
      startLong() {
        long = get(`/slow/${LONG_REQUEST_MS}`, false).then(
          (res) => void (answered(res, 'long request') ? (longAnswered = Date.now()) : undefined),
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
        loopAgent.destroy();
        await idle.close();
      },
    };
  };
}
