// A recording pass-through in front of real Envoy's admin API: every request is forwarded as is
// (method, path, query, body) and Envoy's answer comes back untouched, so the binary under test
// talks to real Envoy while the test sees which calls it made, in order, and what Envoy answered.
// On demand it injects the faults real Envoy cannot be made to show: a 5xx, a hang, a cut-off
// JSON body, a slow answer, any other answer (a redirect, odd JSON), an endless body, Envoy's own
// answer rewritten or cut after part of its body; on every path or on one. (Envoy dying is real:
// kill it.) Its own answers carry the headers real Envoy's admin API puts on every answer, and a
// pass-through answer keeps Envoy's status line and raw headers as they were; Node adds only the
// hop-by-hop `Connection: keep-alive`.
// Tests and benchmarks share it: each call also carries performance.now() for the bench's clock.
import { createServer, type IncomingMessage, type OutgoingHttpHeader, request, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';

export interface AdminCall {
  readonly method: string;
  readonly path: string;
  /** The raw query string without `?`; '' when none. */
  readonly query: string;
  /** Date.now() when the request arrived. */
  readonly time: number;
  /** performance.now() when the request arrived (the benchmarks' clock). */
  readonly receivedAt: number;
  /** Envoy's status code, once it answered; 0 while pending or when forwarding failed. */
  status: number;
  /** Body bytes a 'flood' fault has sent on this call so far; 0 for any other answer. */
  floodBytes: number;
}

export type AdminFault =
  | { readonly kind: 'status'; readonly status: number }
  | { readonly kind: 'hang' }
  | { readonly kind: 'garbage' }
  | { readonly kind: 'delay'; readonly ms: number }
  /** Any answer at all: a redirect, a JSON body with odd values, a 200 that is not JSON. */
  | { readonly kind: 'answer'; readonly status: number; readonly body: string; readonly location?: string }
  /**
   * A 200 whose body never ends, sent as fast as the client reads until it goes away or `maxBytes`
   * (default 256 MiB) are out: JSON padding, or with `prometheus` well-formed listener samples, each 0.
   */
  | { readonly kind: 'flood'; readonly prometheus?: boolean; readonly maxBytes?: number }
  /** Envoy's own answer with its body rewritten by `body` (status and headers kept, the length recomputed). */
  | { readonly kind: 'rewrite'; readonly body: (text: string) => string }
  /** Envoy's status line, headers and the first half of its body, then the connection closed. */
  | { readonly kind: 'cut' }
  /** The connection closed as the request arrives, before any answer: what a dying Envoy does. */
  | { readonly kind: 'close' };

/** A 'flood' fault: 64 KiB chunks, with backpressure. */
const FLOOD_CHUNK = Buffer.alloc(64 * 1024, 0x20);
const FLOOD_MAX_BYTES = 256 * 1024 * 1024;
/** Samples per chunk of a Prometheus flood: about 70 KB. */
const FLOOD_SAMPLES = 1_000;

/** The header lines real Envoy 1.40's admin API sends with every answer, in its order; Node adds none but `Connection`. */
function envoyHeaders(contentType: string, extra: readonly string[] = []): OutgoingHttpHeader[] {
  return [
    'content-type',
    contentType,
    'cache-control',
    'no-cache, max-age=0',
    'x-content-type-options',
    'nosniff',
    ...extra,
    'date',
    new Date().toUTCString(),
    'server',
    'envoy',
    'transfer-encoding',
    'chunked',
  ];
}

const JSON_TYPE = 'application/json';
const TEXT_TYPE = 'text/plain; charset=UTF-8';

/** The n-th chunk of a Prometheus flood: samples of listeners no Envoy has, named as Envoy names its own. */
function prometheusChunk(n: number): string {
  let text = '';
  for (let i = n * FLOOD_SAMPLES; i < (n + 1) * FLOOD_SAMPLES; i += 1) text += `envoy_listener_downstream_cx_active{envoy_listener_address="x_${i}"} 0\n`;
  return text;
}

function flood(res: ServerResponse, call: AdminCall, fault: Extract<AdminFault, { kind: 'flood' }>): void {
  const maxBytes = fault.maxBytes ?? FLOOD_MAX_BYTES;
  res.writeHead(200, envoyHeaders(fault.prometheus === true ? TEXT_TYPE : JSON_TYPE));
  if (fault.prometheus !== true) res.write('{"stats":[');
  let chunks = 0;
  const pump = (): void => {
    while (!res.destroyed && call.floodBytes < maxBytes) {
      const chunk = fault.prometheus === true ? prometheusChunk(chunks) : FLOOD_CHUNK;
      chunks += 1;
      call.floodBytes += chunk.length;
      if (!res.write(chunk)) return void res.once('drain', pump);
    }
    if (!res.destroyed) res.end(fault.prometheus === true ? '' : ']}');
  };
  pump();
}

/** What a 'garbage' fault answers: cut-off JSON under a JSON content type. */
const GARBAGE_BODY = '{"stats":[{"name":"server.total_connections","val';

export interface AdminTap {
  /** Where the binary under test should send admin requests: `127.0.0.1:PORT`, or the `listen` address. */
  readonly adminAddress: string;
  readonly calls: readonly AdminCall[];
  /**
   * Every request from now on (to `onlyPath`, when given: faults on different paths hold together)
   * meets `fault` instead of (or, for 'delay', before) Envoy; undefined ends them all.
   */
  setFault(fault: AdminFault | undefined, onlyPath?: string): void;
  /** `listener` sees each call as it arrives. */
  onCall(listener: (call: AdminCall) => void): void;
  close(): Promise<void>;
}

/** Raw header pairs without Content-Length and Transfer-Encoding: Node then sends the body chunked. */
function withoutLength(raw: readonly string[]): string[] {
  const kept: string[] = [];
  for (let i = 0; i < raw.length; i += 2) {
    if (!/^(content-length|transfer-encoding)$/i.test(raw[i] as string)) kept.push(raw[i] as string, raw[i + 1] as string);
  }
  return kept;
}

/** `target` as --admin-address takes it: `host:port`, `[v6]:port` or `unix:/path`. */
function destination(target: string): { host: string; port: number } | { socketPath: string } {
  if (target.startsWith('unix:')) return { socketPath: target.slice('unix:'.length) };
  const match = /^\[?([^\]]+?)\]?:(\d+)$/.exec(target);
  if (match === null) throw new Error(`not an admin address: ${target}`);
  return { host: match[1] as string, port: Number(match[2]) };
}

/**
 * `target`: Envoy's admin address. `listen`: where the tap itself listens, as --admin-address
 * spells it (default: a free port on 127.0.0.1), so a pod's containers can find it where they
 * expect Envoy's admin API.
 */
export async function startAdminTap(target: string, listen?: string): Promise<AdminTap> {
  const to = destination(target);
  const calls: AdminCall[] = [];
  const listeners: Array<(call: AdminCall) => void> = [];
  /** By path; '' for every path. */
  const faults = new Map<string, AdminFault>();
  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    const url = req.url ?? '/';
    const at = url.indexOf('?');
    const call: AdminCall = {
      method: req.method ?? 'GET',
      path: at < 0 ? url : url.slice(0, at),
      query: at < 0 ? '' : url.slice(at + 1),
      time: Date.now(),
      receivedAt: performance.now(),
      status: 0,
      floodBytes: 0,
    };
    calls.push(call);
    for (const listener of listeners) listener(call);
    const now = faults.get(call.path) ?? faults.get('');
    if (now?.kind === 'hang') return void req.resume(); // read, never answered
    if (now?.kind === 'close') return void res.destroy();
    if (now?.kind === 'answer') {
      req.resume();
      call.status = now.status;
      // Envoy answers its Prometheus endpoint as text, the rest of /stats as JSON.
      const type = call.path === '/stats/prometheus' ? TEXT_TYPE : JSON_TYPE;
      res.writeHead(now.status, envoyHeaders(type, now.location === undefined ? [] : ['location', now.location])).end(now.body);
      return;
    }
    if (now?.kind === 'flood') {
      req.resume();
      call.status = 200;
      flood(res, call, now);
      return;
    }
    if (now?.kind === 'status' || now?.kind === 'garbage') {
      req.resume();
      call.status = now.kind === 'status' ? now.status : 200;
      // A status fault answers as Envoy's admin API does with a 5xx of its own (`/ready` while draining): one text line.
      const [type, body] = now.kind === 'status' ? [TEXT_TYPE, `injected fault: status ${now.status}\n`] : [JSON_TYPE, GARBAGE_BODY];
      res.writeHead(call.status, envoyHeaders(type)).end(body);
      return;
    }
    if (now?.kind === 'delay') setTimeout(() => forward(req, res, call), now.ms);
    else forward(req, res, call, now?.kind === 'rewrite' || now?.kind === 'cut' ? now : undefined);
  };
  const forward = (req: IncomingMessage, res: ServerResponse, call: AdminCall, change?: Extract<AdminFault, { kind: 'rewrite' | 'cut' }>): void => {
    const url = req.url ?? '/';
    const upstream = request({ ...to, method: req.method, path: url, headers: req.headers, agent: false }, (answer) => {
      call.status = answer.statusCode ?? 0;
      if (change === undefined) {
        res.writeHead(call.status, answer.statusMessage, answer.rawHeaders);
        return void answer.pipe(res);
      }
      const chunks: Buffer[] = [];
      answer.on('data', (chunk: Buffer) => chunks.push(chunk));
      answer.on('end', () => {
        const body = Buffer.concat(chunks);
        // Sent chunked, as Envoy sends its admin answers: a length Envoy gave no longer holds.
        res.writeHead(call.status, answer.statusMessage, withoutLength(answer.rawHeaders));
        if (change.kind === 'rewrite') return void res.end(change.body(body.toString('utf8')));
        // Flushed first, so the client has the head and part of the body when the connection closes.
        res.write(body.subarray(0, Math.max(1, Math.floor(body.length / 2))), () => res.destroy());
      });
    });
    // Envoy gone: the client sees its connection reset, as it would talking to Envoy directly.
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  };
  const server: Server = createServer(handle);
  // No `Keep-Alive: timeout=5` header of Node's own on pass-through answers: Envoy sends none. close() ends idle sockets.
  server.keepAliveTimeout = 0;
  const at = listen === undefined ? { host: '127.0.0.1', port: 0 } : destination(listen);
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen('socketPath' in at ? { path: at.socketPath } : at, resolve));
  const bound = server.address();
  return {
    adminAddress:
      typeof bound === 'string'
        ? `unix:${bound}`
        : `${(bound as AddressInfo).address.includes(':') ? `[${(bound as AddressInfo).address}]` : (bound as AddressInfo).address}:${(bound as AddressInfo).port}`,
    calls,
    onCall: (listener) => void listeners.push(listener),
    setFault: (next, onlyPath) => {
      if (next === undefined) faults.clear();
      else faults.set(onlyPath ?? '', next);
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
