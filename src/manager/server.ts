// The manager's HTTP server. /shutdown/ready only ever waits: nothing it receives can trigger
// anything. /shutdown/drain exists only in native-sidecar mode, and only for the pod's own hook.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { finished } from 'node:stream/promises';
import { formatDuration } from '../shared/duration.js';
import type { Logger } from '../shared/log.js';
import type { DrainWatchdog, NoDrain } from './drain-watchdog.js';
import type { HookTokenCheck } from './hook-token.js';
import { LogSummary } from './log-summary.js';
import type { ReadyContent, ReadyWatch } from './ready-watch.js';

/** The path Envoy's preStop httpGet calls (Envoy Gateway's, so manifests carry over). */
export const READY_PATH = '/shutdown/ready';
/** Native-sidecar mode: Envoy's preStop httpGet starts the drain here, with the hook token. */
export const DRAIN_PATH = '/shutdown/drain';
export const HEALTHZ_PATH = '/healthz';

const KEEP_ALIVE_TIMEOUT_MS = 5_000;
/**
 * Node enforces its request timeouts by scanning every connection on an interval that runs even
 * with no connection open: an idle sidecar would wake every check forever. Pushed out to the
 * longest interval Node's timers take (about 24.8 days); the timeout is enforced per connection
 * instead (see cutSlowRequests), so an idle manager has no timer at all.
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

export const OWN_ENDPOINTS: Endpoints = { readyPath: READY_PATH };

/** Runs the drain (once for all concurrent callers) and says how it ended. */
export type DrainRunner = () => Promise<{ readonly ok: boolean; readonly report: unknown }>;

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
}

export function createManagerServer(options: ManagerServerOptions): ManagerServer {
  const { log } = options;
  const summary = new LogSummary(log);
  const endpoints = options.endpoints ?? OWN_ENDPOINTS;
  const methods = (allowed: readonly string[]): readonly string[] | undefined => (endpoints.anyMethod === true ? undefined : allowed);
  let pending = 0;
  let waiting = 0;
  let hookWaiters = 0;
  let onIdle: (() => void) | undefined;
  // Who to tell when the manager stops; each waiter leaves the set when it is answered or gone,
  // so nothing is kept for waiters that went away.
  const onStop = new Set<(stopping: Stopping) => void>();
  let stopped: Stopping | undefined;
  const whenStopping: WhenStopping = (listener) => {
    if (stopped !== undefined) {
      listener(stopped);
      return () => undefined;
    }
    onStop.add(listener);
    return () => onStop.delete(listener);
  };
  const hold = (work: Promise<void>): void => {
    pending += 1;
    void work.finally(() => {
      pending -= 1;
      if (pending !== 0) return;
      summary.flush();
      onIdle?.();
    });
  };

  const server = createServer(
    {
      headersTimeout: 0,
      requestTimeout: 0,
      connectionsCheckingInterval: NEVER_CHECK_INTERVAL_MS,
      keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
    },
    (request, response) => {
      request.resume(); // a body, if any, is ignored but must not stall the socket
      const path = requestPath(request.url ?? '');
      if (path === HEALTHZ_PATH) {
        if (allow(request, response, methods(['GET', 'HEAD']))) reply(response, 200, endpoints.okBody ?? 'ok\n');
      } else if (path === endpoints.readyPath) {
        if (!allow(request, response, methods(['GET']))) return;
        if (waiting >= options.maxWaiters) {
          summary.event('warn', { waiting, maxWaiters: options.maxWaiters }, 'too many waiters: refusing /shutdown/ready');
          reply(response, 503, `too many waiters (${options.maxWaiters})\n`);
          return;
        }
        const envoyPrestop = options.carriesHookToken?.(request) ?? true;
        if (envoyPrestop && ++hookWaiters === 1) options.onEnvoyPrestop(true);
        waiting += 1;
        // Envoy's own preStop request means the pod terminates: never folded into strangers' lines.
        summary.event('info', { remote: request.socket.remoteAddress, waiting, envoyPrestop }, 'waiting for the drain to finish', `waiting:${envoyPrestop}`);
        hold(
          waitForReady(response, options, summary, endpoints.okBody, whenStopping).finally(() => {
            waiting -= 1;
            if (envoyPrestop && --hookWaiters === 0) options.onEnvoyPrestop(false);
          }),
        );
      } else if (path === DRAIN_PATH && options.runDrain !== undefined) {
        if (!allow(request, response, ['GET'])) return;
        if (options.carriesHookToken?.(request) !== true) {
          summary.event('warn', { remote: request.socket.remoteAddress }, 'drain request refused: it does not carry the hook token');
          reply(response, 403, 'forbidden\n');
          return;
        }
        hold(drainFor(response, options.runDrain, log));
      } else {
        reply(response, 404, 'not found\n');
      }
    },
  );
  // The socket inactivity timeout stays off: a waiter is silent by design for up to --ready-timeout.
  server.timeout = 0;
  cutSlowRequests(server, options.requestTimeoutMs);
  return {
    server,
    get pending() {
      return pending;
    },
    get waiting() {
      return waiting;
    },
    releaseWaiters: (content) => {
      stopped = { stopping: true, content };
      for (const listener of [...onStop]) listener(stopped);
    },
    drained: () => (pending === 0 ? Promise.resolve() : new Promise<void>((resolve) => (onIdle = resolve))),
  };
}

interface Stopping {
  readonly stopping: true;
  /** The ready file's content at the stop, if it was there. */
  readonly content: ReadyContent | undefined;
}

/** Calls `listener` when the manager stops (at once if it has); returns the unsubscribe. */
type WhenStopping = (listener: (stopping: Stopping) => void) => () => void;

/**
 * The path of a request target in origin form (`/shutdown/ready?x`) or absolute form
 * (`http://host/shutdown/ready`, which HTTP/1.1 servers must accept too).
 */
export function requestPath(target: string): string {
  if (target.startsWith('/')) return target.split('?', 1)[0] ?? '';
  if (!/^https?:\/\//i.test(target)) return '';
  try {
    return new URL(target).pathname;
  } catch {
    return '';
  }
}

/**
 * A client must send each whole request within `timeoutMs` of connecting, or of its first byte on
 * a kept-alive connection; otherwise 408 and the connection is closed. One timer per connection,
 * armed only while a request is arriving: waiting for the answer is not bounded by it, and an
 * idle manager holds no timer.
 */
function cutSlowRequests(server: Server, timeoutMs: number): void {
  const arriving = new WeakMap<Socket, { cancel(): void }>();
  const expect = (socket: Socket): void => {
    const timer = setTimeout(() => {
      if (socket.writable) socket.end('HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      // A client that never reads its 408 must not hold the socket either.
      setTimeout(() => socket.destroy(), 1_000).unref();
    }, timeoutMs);
    const cancel = (): void => {
      clearTimeout(timer);
      arriving.delete(socket);
      socket.off('close', cancel);
    };
    arriving.set(socket, { cancel });
    socket.once('close', cancel);
  };
  server.on('connection', expect);
  server.prependListener('request', (request: IncomingMessage, response: ServerResponse) => {
    const { socket } = request;
    // The whole request is in once its body (usually none) has ended.
    request.once('end', () => arriving.get(socket)?.cancel());
    // A kept-alive connection: the next request's clock starts with its first byte.
    response.once('finish', () => {
      if (!socket.destroyed) socket.once('data', () => expect(socket));
    });
  });
}

async function waitForReady(
  response: ServerResponse,
  options: ManagerServerOptions,
  summary: LogSummary,
  okBody: string | undefined,
  whenStopping: WhenStopping,
): Promise<void> {
  const { readyTimeoutMs } = options;
  const startedAt = Date.now();
  const gone = new AbortController();
  // 'close' on the response before it finished: the client went away. Forget it at once.
  const onClose = (): void => gone.abort();
  response.on('close', onClose);
  const timeout = Number.isFinite(readyTimeoutMs) ? setTimeout(() => gone.abort('timeout'), readyTimeoutMs) : undefined;
  let unwatch: () => void = () => undefined;
  let unsubscribe: () => void = () => undefined;
  const noDrain = new Promise<NoDrain>((resolve) => (unwatch = options.watchdog.watch(resolve)));
  const stopping = new Promise<Stopping>((resolve) => (unsubscribe = whenStopping(resolve)));
  const raced = await Promise.race([options.readyWatch.wait(gone.signal), noDrain, stopping]);
  // Nothing of this waiter may stay behind in the shared watchdog, ready watch, stop list or timers.
  unwatch();
  unsubscribe();
  gone.abort('answered');
  clearTimeout(timeout);
  response.off('close', onClose);
  const waitedMs = Date.now() - startedAt;
  const stoppedWithout = typeof raced === 'object' && 'stopping' in raced && raced.content === undefined;
  const outcome = typeof raced === 'object' && 'stopping' in raced ? raced.content : raced;
  if (stoppedWithout) {
    // The manager logs why once, for every waiter.
    reply(response, 500, 'manager stopping before the ready file appeared: released undrained\n');
  } else if (outcome !== undefined && outcome !== 'unreadable' && 'kind' in outcome) {
    const { message, body } = describeNoDrain(outcome);
    summary.event('error', { waitedMs, drainStartTimeout: formatDuration(options.drainStartTimeoutMs), ...outcome }, message);
    reply(response, 500, body);
  } else if (outcome !== undefined) {
    summary.event('info', { waitedMs, ...describe(outcome) }, 'drain finished: releasing envoy');
    if (okBody !== undefined) reply(response, 200, okBody);
    else reply(response, 200, `${JSON.stringify(outcome === 'unreadable' ? { result: 'unknown' } : outcome)}\n`, 'application/json');
  } else if (gone.signal.reason === 'timeout') {
    summary.event('error', { waitedMs, readyTimeout: formatDuration(readyTimeoutMs) }, 'ready file did not appear before --ready-timeout: releasing envoy undrained');
    // A 5xx makes kubelet record a FailedPreStopHook event: the drain did not finish.
    reply(response, 500, `ready file did not appear within ${formatDuration(readyTimeoutMs)}\n`);
  } else {
    summary.event('info', { waitedMs }, 'waiter went away');
  }
  // Count the waiter as answered only once its bytes are out: the process may exit right after.
  await finished(response).catch(() => undefined);
}

/** The log line and the answer's body for a drain that never started, or started and died. */
function describeNoDrain(noDrain: NoDrain): { message: string; body: string } {
  if (noDrain.kind === 'never-started') {
    return {
      message: "no drain is running and no ready file appeared: releasing envoy undrained (did the sidecar's preStop hook run?)",
      body: 'no drain started: released undrained\n',
    };
  }
  return {
    message: 'a drain started, but its process ended without writing the ready file: releasing envoy undrained (was the hook killed?)',
    body: `the drain process (pid ${noDrain.pid}) ended without finishing (${noDrain.why}): released undrained\n`,
  };
}

async function drainFor(response: ServerResponse, runDrain: DrainRunner, log: Logger): Promise<void> {
  log.info('drain requested by the pod hook');
  const { ok, report } = await runDrain();
  // kubelet only records the status: a 5xx leaves a FailedPreStopHook event for a timeout or an unreachable Envoy.
  reply(response, ok ? 200 : 500, `${JSON.stringify(report)}\n`, 'application/json');
  await finished(response).catch(() => undefined);
}

function describe(content: ReadyContent): Record<string, unknown> {
  if (content === 'unreadable') return { result: 'unknown', note: 'the ready file holds no drain report' };
  return { result: content.result, connections: content.connections, drainElapsedMs: content.elapsedMs, drainExitCode: content.exitCode };
}

/** `methods` undefined: every method is served. */
function allow(request: IncomingMessage, response: ServerResponse, methods: readonly string[] | undefined): boolean {
  if (methods === undefined || methods.includes(request.method ?? '')) return true;
  response.setHeader('Allow', methods.join(', '));
  reply(response, 405, 'method not allowed\n');
  return false;
}

function reply(response: ServerResponse, status: number, body: string, type = 'text/plain; charset=utf-8'): void {
  if (response.destroyed) return;
  response.writeHead(status, { 'Content-Type': type, 'Content-Length': Buffer.byteLength(body), 'Cache-Control': 'no-store' });
  response.end(response.req.method === 'HEAD' ? undefined : body);
}
