// Envoy's admin API over HTTP/1.1, on loopback TCP or a Unix socket. One keep-alive connection
// serves every call, so a fast poll costs one request, not one handshake, per read. Every call is
// bounded in time (--admin-timeout) and in size (MAX_ADMIN_BODY_BYTES).
// Node's own http client: a hook's start-up reaches its first admin call without loading an HTTP
// library (undici cost about 45 ms of a 65 ms start).
import { Agent, type IncomingMessage, request } from 'node:http';
import { AdminError, errorMessage } from '../shared/errors.js';
import { collectGarbage } from '../shared/gc.js';
import { type AdminAddress, formatAdminAddress } from './address.js';

/**
 * The largest admin answer read whole. /server_info and the start calls' answers are a few KB; a
 * body past this is not one of them, and buffering it could get the hook OOM-killed mid-drain.
 * Stats answers are read line by line into their counts (`lines`), under a bound of their own.
 */
const MAX_ADMIN_BODY_BYTES = 1024 * 1024;
/** Of an error answer, only the start is kept, for the log. */
const ERROR_BODY_BYTES = 4 * 1024;

/**
 * Socket errors that mean nothing is there to answer: nothing listens on the port or socket path
 * (Envoy exited), or the connection was cut before any answer (Envoy died mid-call). They count only
 * before the answer's status line: a timeout, or an answer of any kind, even one cut short, means
 * something was alive there.
 */
const GONE_CODES: ReadonlySet<string> = new Set(['ECONNREFUSED', 'ENOENT', 'ECONNRESET', 'EPIPE']);

/** True only for a call that found nothing there to answer: the one sign that Envoy has exited. */
export function isEnvoyGone(error: unknown): boolean {
  return error instanceof AdminError && error.code === 'ESM_ADMIN_UNREACHABLE';
}

export interface AdminClientOptions {
  readonly address: AdminAddress;
  /** Bound on each call: connect, headers and body together. */
  readonly timeoutMs: number;
}

/** How a 200 answer's body is taken: whole (at most MAX_ADMIN_BODY_BYTES), or line by line up to `maxBytes`, never held. */
export interface LineReader {
  readonly maxBytes: number;
  line(text: string): void;
  /** The answer is over `maxBytes`: let go of everything read from it. */
  discard(): void;
}

export interface EnvoyAdmin {
  /** `POST <path>`, expecting 200. `timeoutMs` shortens the bound of this call only. */
  post(path: string, signal?: AbortSignal, timeoutMs?: number): Promise<string>;
  /** `GET <path>`, expecting 200; returns the body. `timeoutMs` shortens the bound of this call only. */
  get(path: string, signal?: AbortSignal, timeoutMs?: number): Promise<string>;
  /** `GET <path>`, expecting 200, its body handed to `reader` a line at a time. */
  getLines(path: string, reader: LineReader, signal?: AbortSignal, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export async function createAdminClient(options: AdminClientOptions): Promise<EnvoyAdmin> {
  const { address, timeoutMs } = options;
  // One connection, kept alive between calls; Envoy closes idle admin connections on its own.
  const agent = new Agent({ keepAlive: true, maxSockets: 1, maxFreeSockets: 1, timeout: 10_000 });
  const target = address.kind === 'unix' ? { socketPath: address.path, host: 'localhost' } : { host: address.host, port: address.port };
  const where = formatAdminAddress(address);
  const bound = (callTimeoutMs: number | undefined): number => Math.max(1, Math.min(timeoutMs, callTimeoutMs ?? timeoutMs));
  const call = (
    method: 'GET' | 'POST',
    path: string,
    signal: AbortSignal | undefined,
    callTimeoutMs: number | undefined,
    lines?: LineReader,
  ): Promise<string> => callAdmin({ agent, ...target }, where, { method, path, lines }, bound(callTimeoutMs), signal);
  return {
    post: (path, signal, callTimeoutMs) => call('POST', path, signal, callTimeoutMs),
    get: (path, signal, callTimeoutMs) => call('GET', path, signal, callTimeoutMs),
    getLines: async (path, reader, signal, callTimeoutMs) => {
      await call('GET', path, signal, callTimeoutMs, reader);
    },
    close: () => {
      agent.destroy();
      return Promise.resolve();
    },
  };
}

interface Target {
  readonly agent: Agent;
  readonly host: string;
  readonly port?: number;
  readonly socketPath?: string;
}

interface Call {
  readonly method: 'GET' | 'POST';
  readonly path: string;
  readonly lines: LineReader | undefined;
}

async function callAdmin(target: Target, where: string, { method, path, lines }: Call, timeoutMs: number, signal: AbortSignal | undefined): Promise<string> {
  const deadline = AbortSignal.timeout(timeoutMs);
  const combined = signal === undefined ? deadline : AbortSignal.any([signal, deadline]);
  const what = `${method} ${path} to Envoy admin at ${where}`;
  let status = 0;
  let body: { text: string; complete: boolean };
  try {
    const response = await send(target, method, path, combined);
    status = response.statusCode ?? 0;
    const ok = status === 200;
    body = ok && lines !== undefined ? await readLines(response, lines) : await readCapped(response, ok ? MAX_ADMIN_BODY_BYTES : ERROR_BODY_BYTES);
  } catch (error) {
    if (signal?.aborted === true) throw signal.reason;
    if (deadline.aborted) {
      throw new AdminError('ESM_ADMIN_TIMEOUT', `${what} failed: no answer within ${timeoutMs} ms`, false, { cause: error });
    }
    // Any other failure (a reply that is not HTTP, an answer cut short) came from something alive: not proof Envoy is gone.
    const code = (error as { code?: unknown }).code;
    const gone = status === 0 && typeof code === 'string' && GONE_CODES.has(code);
    if (error instanceof AdminError) throw error;
    throw new AdminError(
      gone ? 'ESM_ADMIN_UNREACHABLE' : 'ESM_ADMIN_BAD_RESPONSE',
      `${what} failed${status === 0 ? '' : ` after its status line (${status})`}: ${errorMessage(error)}`,
      false,
      { cause: error },
    );
  }
  if (status !== 200) {
    const firstLine = body.text.split('\n', 1)[0]?.slice(0, 120) ?? '';
    // 4xx means the endpoint or the server is wrong: retrying cannot help.
    throw new AdminError('ESM_ADMIN_STATUS', `${what} answered ${status}: ${firstLine}`, status < 500);
  }
  if (!body.complete) {
    const bound = lines?.maxBytes ?? MAX_ADMIN_BODY_BYTES;
    throw new AdminError('ESM_ADMIN_BAD_RESPONSE', `${what} answered with more than ${bound} bytes: not the answer expected, not read`, false);
  }
  return body.text;
}

/** Resolves with the answer's head; an abort of `signal` destroys the request and its socket. */
function send(target: Target, method: 'GET' | 'POST', path: string, signal: AbortSignal): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const outgoing = request({ ...target, method, path, signal, headers: method === 'POST' ? { 'Content-Length': 0 } : {} }, resolve);
    outgoing.once('error', reject);
    outgoing.end();
  });
}

/**
 * Reads at most `maxBytes` of a body, then drops the rest (and with it the connection): a huge or
 * endless answer costs `maxBytes` of memory, never more.
 */
async function readCapped(body: IncomingMessage, maxBytes: number): Promise<{ text: string; complete: boolean }> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    const room = maxBytes - size;
    if (chunk.length > room) {
      chunks.push(chunk.subarray(0, room));
      body.destroy();
      return { text: Buffer.concat(chunks).toString('utf8'), complete: false };
    }
    chunks.push(chunk);
    size += chunk.length;
  }
  return { text: Buffer.concat(chunks).toString('utf8'), complete: true };
}

/** Hands each line of a body to `reader` as it arrives: only the line being read is held, however large the answer. */
async function readLines(body: IncomingMessage, reader: LineReader): Promise<{ text: string; complete: boolean }> {
  let size = 0;
  let partial = '';
  body.setEncoding('utf8');
  for await (const chunk of body as AsyncIterable<string>) {
    size += chunk.length;
    if (size > reader.maxBytes) {
      body.destroy();
      reader.discard();
      partial = '';
      // Left to itself V8 grows its heap by several times what such an answer held, at every one
      // that comes (a proxy gone wrong sends it to each read): give it back now.
      collectGarbage();
      return { text: '', complete: false };
    }
    const lines = (partial + chunk).split('\n');
    partial = lines.pop() as string;
    for (const line of lines) reader.line(line);
  }
  if (partial !== '') reader.line(partial);
  return { text: '', complete: true };
}
