// Envoy's admin API over HTTP/1.1, on loopback TCP or a Unix socket. One keep-alive connection
// serves every call, so a fast poll costs one request, not one handshake, per read. Every call is
// bounded in time (--admin-timeout) and in size (MAX_ADMIN_BODY_BYTES).
// undici is loaded on first use: the long-running manager never pays for it.
import type { Client, Dispatcher } from 'undici';
import { AdminError, errorMessage } from '../errors.js';
import { type AdminAddress, formatAdminAddress } from './address.js';

/**
 * The largest admin answer read. The filtered /stats and /server_info answers are a few KB; a
 * body past this is not one of them, and buffering it could get the hook OOM-killed mid-drain.
 */
export const MAX_ADMIN_BODY_BYTES = 1024 * 1024;
/** Of an error answer, only the start is kept, for the log. */
const ERROR_BODY_BYTES = 4 * 1024;

/**
 * Socket errors that mean nothing is there to answer: nothing listens on the port or socket path
 * (Envoy exited), or the connection was cut before any answer (Envoy died mid-call). A timeout or
 * an HTTP answer of any kind is not on this list: something is alive there.
 */
const GONE_CODES: ReadonlySet<string> = new Set(['ECONNREFUSED', 'ENOENT', 'ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET']);
/** undici's own timers, set to the same bound as the call's deadline, may fire first. */
const TIMEOUT_CODES: ReadonlySet<string> = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

/** True only for a call that found nothing there to answer: the one sign that Envoy has exited. */
export function isEnvoyGone(error: unknown): boolean {
  return error instanceof AdminError && error.code === 'ESM_ADMIN_UNREACHABLE';
}

export interface AdminClientOptions {
  readonly address: AdminAddress;
  /** Bound on each call: connect, headers and body together. */
  readonly timeoutMs: number;
}

export interface EnvoyAdmin {
  /** `POST <path>`, expecting 200. `timeoutMs` shortens the bound of this call only. */
  post(path: string, signal?: AbortSignal, timeoutMs?: number): Promise<string>;
  /** `GET <path>`, expecting 200; returns the body. `timeoutMs` shortens the bound of this call only. */
  get(path: string, signal?: AbortSignal, timeoutMs?: number): Promise<string>;
  close(): Promise<void>;
}

export async function createAdminClient(options: AdminClientOptions): Promise<EnvoyAdmin> {
  const { Client } = await import('undici');
  const { address, timeoutMs } = options;
  const origin = address.kind === 'unix' ? 'http://localhost' : `http://${formatAdminAddress(address)}`;
  const client = new Client(origin, {
    ...(address.kind === 'unix' ? { socketPath: address.path } : {}),
    connect: { timeout: timeoutMs },
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
    keepAliveTimeout: 10_000,
  });
  const where = formatAdminAddress(address);
  const bound = (callTimeoutMs: number | undefined): number => Math.max(1, Math.min(timeoutMs, callTimeoutMs ?? timeoutMs));
  return {
    post: (path, signal, callTimeoutMs) => call(client, where, 'POST', path, bound(callTimeoutMs), signal),
    get: (path, signal, callTimeoutMs) => call(client, where, 'GET', path, bound(callTimeoutMs), signal),
    close: () => client.destroy(),
  };
}

async function call(
  client: Client,
  where: string,
  method: 'GET' | 'POST',
  path: string,
  timeoutMs: number,
  signal: AbortSignal | undefined,
): Promise<string> {
  const deadline = AbortSignal.timeout(timeoutMs);
  const combined = signal === undefined ? deadline : AbortSignal.any([signal, deadline]);
  const what = `${method} ${path} to Envoy admin at ${where}`;
  let status: number;
  let body: { text: string; complete: boolean };
  try {
    const response = await client.request({ method, path, signal: combined });
    status = response.statusCode;
    body = await readCapped(response.body, status === 200 ? MAX_ADMIN_BODY_BYTES : ERROR_BODY_BYTES);
  } catch (error) {
    if (signal?.aborted === true) throw signal.reason;
    const code = socketErrorCode(error);
    if (deadline.aborted || (code !== undefined && TIMEOUT_CODES.has(code))) {
      throw new AdminError('ESM_ADMIN_TIMEOUT', `${what} failed: no answer within ${timeoutMs} ms`, false, { cause: error });
    }
    // Any other failure (a reply that is not HTTP, say) came from something alive: not proof Envoy is gone.
    const gone = code !== undefined && GONE_CODES.has(code);
    throw new AdminError(gone ? 'ESM_ADMIN_UNREACHABLE' : 'ESM_ADMIN_BAD_RESPONSE', `${what} failed: ${describe(error)}`, false, { cause: error });
  }
  if (status !== 200) {
    const firstLine = body.text.split('\n', 1)[0]?.slice(0, 120) ?? '';
    // 4xx means the endpoint or the server is wrong: retrying cannot help.
    throw new AdminError('ESM_ADMIN_STATUS', `${what} answered ${status}: ${firstLine}`, status < 500);
  }
  if (!body.complete) {
    throw new AdminError('ESM_ADMIN_BAD_RESPONSE', `${what} answered with more than ${MAX_ADMIN_BODY_BYTES} bytes: not the answer expected, not read`, false);
  }
  return body.text;
}

/**
 * Reads at most `maxBytes` of a body, then drops the rest (and with it the connection): a huge or
 * endless answer costs `maxBytes` of memory, never more. A declared length past the cap is not
 * read at all.
 */
async function readCapped(body: Dispatcher.ResponseData['body'], maxBytes: number): Promise<{ text: string; complete: boolean }> {
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

/** undici wraps the socket error: the code is on it or on its cause. */
function socketErrorCode(error: unknown): string | undefined {
  for (let current: unknown = error, depth = 0; current instanceof Error && depth < 3; current = current.cause, depth += 1) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && code !== 'UND_ERR_ABORTED') return code;
  }
  return undefined;
}

/** undici wraps the socket error; its code (ECONNREFUSED, ENOENT for a missing socket) is what a person needs. */
function describe(error: unknown): string {
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
  return errorMessage(cause);
}
