// The manager's HTTP server. /shutdown/ready only ever waits: nothing it receives can trigger
// anything. /shutdown/drain exists only in native-sidecar mode, and only for the pod's own hook.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { finished } from 'node:stream/promises';
import type { Logger } from '../shared/log.js';
import { reply } from './answers.js';
import { collectAfterCrowds } from './collect-garbage.js';
import type { DrainWatchdog } from './drain-watchdog.js';
import { ScrapeLog } from './final-scrape.js';
import type { HookTokenCheck } from './hook-token.js';
import { LogSummary } from './log-summary.js';
import { ManagerMetrics, METRICS_CONTENT_TYPE } from './metrics.js';
import type { ReadyContent, ReadyWatch } from './ready-watch.js';
import { cutSlowRequests } from './slow-requests.js';
import { Waiters } from './waiters.js';

/** The path Envoy's preStop httpGet calls (Envoy Gateway's, so manifests carry over). */
export const READY_PATH = '/shutdown/ready';
/** Native-sidecar mode: Envoy's preStop httpGet starts the drain here, with the hook token. */
export const DRAIN_PATH = '/shutdown/drain';
export const HEALTHZ_PATH = '/healthz';
/** Prometheus' text format, read-only: what the manager has seen since it started. */
export const METRICS_PATH = '/metrics';

const KEEP_ALIVE_TIMEOUT_MS = 5_000;
/**
 * Node's own request-timeout scan, pushed out to the longest interval Node's timers take (about
 * 24.8 days): cutSlowRequests enforces the timeout per connection, so an idle manager has no timer.
 */
const NEVER_CHECK_INTERVAL_MS = 2 ** 31 - 1;

/**
 * What the endpoints look like from outside. Ours by default; Envoy Gateway's or Contour's when
 * the executable runs under their name (see src/dropin), so their pods' hooks get what they expect.
 */
export interface Endpoints {
  /** Where Envoy's preStop httpGet waits. */
  readonly readyPath: string;
  /** The body of every 200 from /healthz and the ready path. Undefined: ours (`ok`, the drain report). */
  readonly okBody?: string;
  /** Accept any method on those paths, as Go's ServeMux does. */
  readonly anyMethod?: boolean;
}

const OWN_ENDPOINTS: Endpoints = { readyPath: READY_PATH };

/** Runs the drain (once for all concurrent callers) and says how it ended: `content` as the ready file holds it, when it does. */
export type DrainRunner = () => Promise<{ readonly ok: boolean; readonly report: unknown; readonly content: ReadyContent | undefined }>;

export interface ManagerServerOptions {
  /** Infinity: no timeout (Contour's manager waits until the file appears or the client leaves). */
  readonly readyTimeoutMs: number;
  readonly endpoints?: Endpoints;
  readonly maxWaiters: number;
  /** A client must send its whole request (headers included) within this. Waiting for the answer is not bounded by it. */
  readonly requestTimeoutMs: number;
  readonly readyWatch: ReadyWatch;
  readonly watchdog: DrainWatchdog;
  readonly drainStartTimeoutMs: number;
  /** Set when a hook token is configured: only requests carrying it count as Envoy's preStop hook. */
  readonly carriesHookToken: HookTokenCheck | undefined;
  /**
   * Called when the first /shutdown/ready that counts as Envoy's preStop hook starts waiting
   * (`true`), and when the last such one is answered or leaves (`false`).
   */
  readonly onEnvoyPrestop: (waiting: boolean) => void;
  /** Native-sidecar mode only. */
  readonly runDrain: DrainRunner | undefined;
  /** Envoy was released after a drain not seen before (once per drain); its answers are written by then. */
  readonly onDrain?: (content: ReadyContent) => void;
  readonly log: Logger;
}

export interface ManagerServer {
  readonly server: Server;
  /** Requests held open and not answered yet (waiters and drains). */
  readonly pending: number;
  /** /shutdown/ready requests held open. */
  readonly waiting: number;
  /**
   * The manager is stopping: answer every /shutdown/ready waiter now, with `content` (the ready
   * file read once more) or, without it, 500. Drains in progress still end on their own.
   */
  releaseWaiters(content: ReadyContent | undefined): void;
  /** Resolves when every held request has been answered (immediately when none is). */
  drained(): Promise<void>;
  /** The counters' version now, and who read which version. */
  readonly metricsVersion: number;
  readonly scrapes: ScrapeLog;
  /** The manager stays only for its final scrape: from now on every endpoint but /metrics answers 503. */
  serveOnlyMetrics(): void;
}

export function createManagerServer(options: ManagerServerOptions): ManagerServer {
  const routes = new Routes(options);
  const server = createServer(
    {
      headersTimeout: 0,
      requestTimeout: 0,
      connectionsCheckingInterval: NEVER_CHECK_INTERVAL_MS,
      keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
    },
    (request, response) => routes.handle(request, response),
  );
  // The socket inactivity timeout stays off: a waiter is silent by design for up to --ready-timeout.
  server.timeout = 0;
  cutSlowRequests(server, options.requestTimeoutMs);
  return {
    server,
    get pending() {
      return routes.pending;
    },
    get waiting() {
      return routes.waiters.waiting;
    },
    releaseWaiters: (content) => routes.releaseWaiters(content),
    drained: () => routes.drained(),
    get metricsVersion() {
      return routes.metrics.version;
    },
    scrapes: routes.scrapes,
    serveOnlyMetrics: () => {
      routes.onlyMetrics = true;
    },
  };
}

/** Each endpoint's handler, and what they share: the waiters, the drains running, the metrics, the log summary. */
class Routes {
  readonly waiters: Waiters;
  readonly #options: ManagerServerOptions;
  readonly #endpoints: Endpoints;
  readonly #summary: LogSummary;
  readonly metrics = new ManagerMetrics();
  readonly scrapes = new ScrapeLog();
  onlyMetrics = false;
  #drains = 0;
  #onIdle: (() => void) | undefined;

  constructor(options: ManagerServerOptions) {
    this.#options = options;
    this.#endpoints = options.endpoints ?? OWN_ENDPOINTS;
    this.#summary = new LogSummary(options.log);
    const collect = collectAfterCrowds((collected) => options.log.info({ ...collected }, 'memory collected after a crowd of waiters'));
    this.waiters = new Waiters({
      ...options,
      okBody: this.#endpoints.okBody,
      summary: this.#summary,
      onDone: () => {
        collect.ended();
        this.#settled();
      },
      onAnswer: (status) => this.metrics.answered('ready', status),
      onRelease: (content) => {
        this.metrics.readyFileRelease();
        this.#drainSeen(content);
      },
    });
  }

  get pending(): number {
    return this.#drains + this.waiters.pending;
  }

  handle(request: IncomingMessage, response: ServerResponse): void {
    request.resume(); // a body, if any, is ignored but must not stall the socket
    const path = requestPath(request.url ?? '');
    const { runDrain } = this.#options;
    if (this.onlyMetrics && path !== METRICS_PATH) {
      reply(response, 503, 'stopping\n');
    } else if (path === HEALTHZ_PATH) {
      if (allow(request, response, this.#methods(['GET', 'HEAD']))) reply(response, 200, this.#endpoints.okBody ?? 'ok\n');
    } else if (path === METRICS_PATH) {
      // Read-only whatever the endpoints' style: it only reports.
      if (allow(request, response, ['GET', 'HEAD'])) this.#scrape(request, response);
    } else if (path === this.#endpoints.readyPath) {
      if (allow(request, response, this.#methods(['GET']))) this.#ready(request, response);
    } else if (path === DRAIN_PATH && runDrain !== undefined) {
      if (allow(request, response, ['GET'])) this.#drain(request, response, runDrain);
    } else {
      reply(response, 404, 'not found\n');
    }
  }

  releaseWaiters(content: ReadyContent | undefined): void {
    const released = this.waiters.waiting > 0;
    this.waiters.stop(content);
    if (released && content !== undefined) this.#drainSeen(content);
  }

  drained(): Promise<void> {
    return this.pending === 0 ? Promise.resolve() : new Promise<void>((resolve) => (this.#onIdle = resolve));
  }

  /** A GET counts as a scrape of the version it rendered once the whole answer is handed to the kernel. */
  #scrape(request: IncomingMessage, response: ServerResponse): void {
    const version = this.metrics.version;
    reply(response, 200, this.metrics.render(this.waiters.waiting), METRICS_CONTENT_TYPE);
    if (request.method === 'GET') response.once('finish', () => this.scrapes.served(request.socket.remoteAddress ?? '', version));
  }

  #ready(request: IncomingMessage, response: ServerResponse): void {
    const { maxWaiters } = this.#options;
    if (this.waiters.waiting >= maxWaiters) {
      this.#summary.event('warn', { waiting: this.waiters.waiting, maxWaiters }, 'too many waiters: refusing /shutdown/ready');
      reply(response, 503, `too many waiters (${maxWaiters})\n`);
      this.metrics.answered('ready', 503);
      return;
    }
    this.waiters.add(response, this.#options.carriesHookToken?.(request) ?? true);
  }

  #drain(request: IncomingMessage, response: ServerResponse, runDrain: DrainRunner): void {
    if (this.#options.carriesHookToken?.(request) !== true) {
      this.#summary.event('warn', { remote: request.socket.remoteAddress }, 'drain request refused: it does not carry the hook token');
      reply(response, 403, 'forbidden\n');
      this.metrics.answered('drain', 403);
      return;
    }
    this.#drains += 1;
    void drainFor(response, runDrain, this.#options.log, (status, content) => {
      this.metrics.answered('drain', status);
      if (content !== undefined) this.#drainSeen(content);
    }).finally(() => {
      this.#drains -= 1;
      this.#settled();
    });
  }

  /** Our endpoints' methods; undefined (any) in the style of a peer whose server takes every method. */
  #methods(allowed: readonly string[]): readonly string[] | undefined {
    return this.#endpoints.anyMethod === true ? undefined : allowed;
  }

  #drainSeen(content: ReadyContent): void {
    if (this.metrics.drainSeen(content)) this.#options.onDrain?.(content);
  }

  #settled(): void {
    if (this.pending !== 0) return;
    this.#summary.flush();
    this.#onIdle?.();
  }
}

/**
 * The path of a request target in origin form (`/shutdown/ready?x`) or absolute form
 * (`http://host/shutdown/ready`, which HTTP/1.1 servers must accept too).
 */
function requestPath(target: string): string {
  if (target.startsWith('/')) return target.split('?', 1)[0] ?? '';
  if (!/^https?:\/\//i.test(target)) return '';
  try {
    return new URL(target).pathname;
  } catch {
    return '';
  }
}

/** `answered` is told once the answer, Envoy's release, is written. */
async function drainFor(
  response: ServerResponse,
  runDrain: DrainRunner,
  log: Logger,
  answered: (status: number, content: ReadyContent | undefined) => void,
): Promise<void> {
  log.info('drain requested by the pod hook');
  const { ok, report, content } = await runDrain();
  // kubelet only records the status: a 5xx leaves a FailedPreStopHook event for a timeout or an unreachable Envoy.
  reply(response, ok ? 200 : 500, `${JSON.stringify(report)}\n`, 'application/json');
  answered(ok ? 200 : 500, content);
  await finished(response).catch(() => undefined);
}

/** `methods` undefined: every method is served. */
function allow(request: IncomingMessage, response: ServerResponse, methods: readonly string[] | undefined): boolean {
  if (methods === undefined || methods.includes(request.method ?? '')) return true;
  response.setHeader('Allow', methods.join(', '));
  reply(response, 405, 'method not allowed\n');
  return false;
}
