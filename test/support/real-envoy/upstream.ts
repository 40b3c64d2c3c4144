// The application behind the pod's Envoy: a plain HTTP/1.1 server. `GET /slow/<ms>` answers after
// that many milliseconds (a long request), `GET /held` only once the test calls release(); anything
// else after 5 ms; a WebSocket upgrade is accepted and echoed. With `tagHeader`, it also notes when
// each request arrived, by that header's value (which balancer server sent it).
import { EventEmitter } from 'node:events';
import { createServer } from 'node:http';
import { listenOnLoopback } from '../ports.js';
import { acceptWebSocket } from '../protocols/websocket.js';

export interface Upstream {
  readonly port: number;
  /** Requests answered so far. */
  answered(): number;
  /** Resolves once this many /slow/<ms> and /held requests are being held at the same time. */
  slowInFlight(count: number): Promise<void>;
  /** Answers every /held request held so far. */
  release(): void;
  /** Arrival times (Date.now()) by the value of `tagHeader`; empty without it. */
  arrivals(): ReadonlyMap<string, readonly number[]>;
  /** When the last request of each `tagHeader` value was answered (Date.now()); empty without it. */
  lastAnswers(): ReadonlyMap<string, number>;
  close(): Promise<void>;
}

export interface UpstreamOptions {
  /** A request header to tally arrivals by (lower case). */
  readonly tagHeader?: string;
}

const DEFAULT_DELAY_MS = 5;
/** Bounds a /slow/<ms> request, so a test cannot ask for an endless one. */
const MAX_DELAY_MS = 60_000;

export async function startUpstream(options: UpstreamOptions = {}): Promise<Upstream> {
  let answered = 0;
  const arrivals = new Map<string, number[]>();
  const lastAnswers = new Map<string, number>();
  let slowHeld = 0;
  const timers = new Set<NodeJS.Timeout>();
  /** The /held requests' answers, waiting for release(). */
  const held = new Set<() => void>();
  const changed = new EventEmitter();
  const server = createServer((req, res) => {
    const slow = /^\/slow\/(\d+)$/.exec(req.url ?? '');
    const hold = req.url === '/held';
    const delayMs = slow === null ? DEFAULT_DELAY_MS : Math.min(Number(slow[1]), MAX_DELAY_MS);
    req.resume();
    const tag = options.tagHeader === undefined ? undefined : req.headers[options.tagHeader];
    if (typeof tag === 'string') {
      const times = arrivals.get(tag) ?? [];
      times.push(Date.now());
      arrivals.set(tag, times);
    }
    if (slow !== null || hold) {
      slowHeld += 1;
      changed.emit('slow');
    }
    const answer = (): void => {
      if (slow !== null || hold) slowHeld -= 1;
      answered += 1;
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '3' }).end('ok\n');
      if (typeof tag === 'string') lastAnswers.set(tag, Date.now());
    };
    if (hold) return void held.add(answer);
    const timer = setTimeout(() => {
      timers.delete(timer);
      answer();
    }, delayMs);
    timers.add(timer);
  });
  server.keepAliveTimeout = 60_000;
  server.on('upgrade', (req, socket) => acceptWebSocket(req, socket));
  const port = await listenOnLoopback(server);
  return {
    port,
    answered: () => answered,
    slowInFlight: (count) =>
      new Promise((resolve) => {
        const check = (): void => {
          if (slowHeld < count) return;
          changed.off('slow', check);
          resolve();
        };
        changed.on('slow', check);
        check();
      }),
    release: () => {
      for (const answer of held) answer();
      held.clear();
    },
    arrivals: () => arrivals,
    lastAnswers: () => lastAnswers,
    close: async () => {
      for (const timer of timers) clearTimeout(timer);
      held.clear();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
