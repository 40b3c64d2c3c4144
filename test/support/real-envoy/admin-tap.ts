// A recording pass-through in front of real Envoy's admin API: every request is forwarded as is
// (method, path, query, body) and Envoy's answer comes back untouched, so the binary under test
// talks to real Envoy while the test sees which calls it made, in order, and what Envoy answered.
// On demand it injects the faults real Envoy cannot be made to show: a 5xx, a hang, a cut-off
// JSON body, a slow answer, any other answer (a redirect, odd JSON), an endless body; on every
// path or on one. (Envoy dying is real: kill it.)
import { type IncomingMessage, type Server, type ServerResponse, createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface AdminCall {
  readonly method: string;
  readonly path: string;
  /** The raw query string without `?`; '' when none. */
  readonly query: string;
  /** Date.now() when the request arrived. */
  readonly time: number;
  /** Envoy's status code, once it answered; 0 while pending or when forwarding failed. */
  status: number;
}

export type AdminFault =
  | { readonly kind: 'status'; readonly status: number }
  | { readonly kind: 'hang' }
  | { readonly kind: 'garbage' }
  | { readonly kind: 'delay'; readonly ms: number }
  /** Any answer at all: a redirect, a JSON body with odd values, a 200 that is not JSON. */
  | { readonly kind: 'answer'; readonly status: number; readonly body: string; readonly location?: string }
  /** A 200 whose body never ends (bounded at 256 MiB), sent as fast as the client reads. */
  | { readonly kind: 'flood' };

/** A 'flood' fault: 64 KiB chunks, with backpressure, until the client goes away or 256 MiB are out. */
const FLOOD_CHUNK = Buffer.alloc(64 * 1024, 0x20);
const FLOOD_MAX_CHUNKS = 4096;

function flood(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.write('{"stats":[');
  let sent = 0;
  const pump = (): void => {
    while (!res.destroyed && sent < FLOOD_MAX_CHUNKS) {
      sent += 1;
      if (!res.write(FLOOD_CHUNK)) return void res.once('drain', pump);
    }
    if (!res.destroyed) res.end(']}');
  };
  pump();
}

/** What a 'garbage' fault answers: cut-off JSON under a JSON content type. */
const GARBAGE_BODY = '{"stats":[{"name":"server.total_connections","val';

export interface AdminTap {
  /** Where the binary under test should send admin requests: `127.0.0.1:PORT`, or the `listen` address. */
  readonly adminAddress: string;
  readonly calls: readonly AdminCall[];
  /** Every request from now on (to `onlyPath`, when given) meets `fault` instead of (or, for 'delay', before) Envoy; undefined ends it. */
  setFault(fault: AdminFault | undefined, onlyPath?: string): void;
  close(): Promise<void>;
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
  let fault: AdminFault | undefined;
  let faultPath: string | undefined;
  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    const url = req.url ?? '/';
    const at = url.indexOf('?');
    const call: AdminCall = { method: req.method ?? 'GET', path: at < 0 ? url : url.slice(0, at), query: at < 0 ? '' : url.slice(at + 1), time: Date.now(), status: 0 };
    calls.push(call);
    const now = faultPath === undefined || faultPath === call.path ? fault : undefined;
    if (now?.kind === 'hang') return void req.resume(); // read, never answered
    if (now?.kind === 'answer') {
      req.resume();
      call.status = now.status;
      res.writeHead(now.status, { 'content-type': 'application/json', ...(now.location === undefined ? {} : { location: now.location }) }).end(now.body);
      return;
    }
    if (now?.kind === 'flood') {
      req.resume();
      call.status = 200;
      return flood(res);
    }
    if (now?.kind === 'status' || now?.kind === 'garbage') {
      req.resume();
      call.status = now.kind === 'status' ? now.status : 200;
      const [type, body] = now.kind === 'status' ? ['text/plain; charset=UTF-8', `injected fault: status ${now.status}\n`] : ['application/json', GARBAGE_BODY];
      res.writeHead(call.status, { 'content-type': type }).end(body);
      return;
    }
    if (now?.kind === 'delay') setTimeout(() => forward(req, res, call), now.ms);
    else forward(req, res, call);
  };
  const forward = (req: IncomingMessage, res: ServerResponse, call: AdminCall): void => {
    const url = req.url ?? '/';
    const upstream = request({ ...to, method: req.method, path: url, headers: req.headers, agent: false }, (answer) => {
      call.status = answer.statusCode ?? 0;
      res.writeHead(call.status, answer.headers);
      answer.pipe(res);
    });
    // Envoy gone: the client sees its connection reset, as it would talking to Envoy directly.
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  };
  const server: Server = createServer(handle);
  const at = listen === undefined ? { host: '127.0.0.1', port: 0 } : destination(listen);
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen('socketPath' in at ? { path: at.socketPath } : at, resolve));
  const bound = server.address();
  return {
    adminAddress: typeof bound === 'string' ? `unix:${bound}` : `${(bound as AddressInfo).address.includes(':') ? `[${(bound as AddressInfo).address}]` : (bound as AddressInfo).address}:${(bound as AddressInfo).port}`,
    calls,
    setFault: (next, onlyPath) => {
      fault = next;
      faultPath = onlyPath;
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
