// Envoy's admin API over HTTP/1.1, on loopback TCP or a Unix socket. One keep-alive connection
// serves every call, so a fast poll costs one request, not one handshake, per read.
// undici is loaded on first use: the long-running manager never pays for it.
import type { Client } from 'undici';
import { AdminError, errorMessage } from '../errors.js';
import { type AdminAddress, formatAdminAddress } from './address.js';

export interface AdminClientOptions {
  readonly address: AdminAddress;
  /** Bound on each call: connect, headers and body together. */
  readonly timeoutMs: number;
}

export interface EnvoyAdmin {
  /** `POST <path>`, expecting 200. */
  post(path: string, signal?: AbortSignal): Promise<string>;
  /** `GET <path>`, expecting 200; returns the body. */
  get(path: string, signal?: AbortSignal): Promise<string>;
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
  return {
    post: (path, signal) => call(client, where, 'POST', path, timeoutMs, signal),
    get: (path, signal) => call(client, where, 'GET', path, timeoutMs, signal),
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
  let status: number;
  let body: string;
  try {
    const response = await client.request({ method, path, signal: combined });
    status = response.statusCode;
    body = await response.body.text();
  } catch (error) {
    if (signal?.aborted === true) throw signal.reason;
    const why = deadline.aborted ? `no answer within ${timeoutMs} ms` : describe(error);
    throw new AdminError('ESM_ADMIN_UNREACHABLE', `${method} ${path} to Envoy admin at ${where} failed: ${why}`, false, {
      cause: error,
    });
  }
  if (status !== 200) {
    const firstLine = body.split('\n', 1)[0]?.slice(0, 120) ?? '';
    // 4xx means the endpoint or the server is wrong: retrying cannot help.
    throw new AdminError('ESM_ADMIN_STATUS', `${method} ${path} to Envoy admin at ${where} answered ${status}: ${firstLine}`, status < 500);
  }
  return body;
}

/** undici wraps the socket error; its code (ECONNREFUSED, ENOENT for a missing socket) is what a person needs. */
function describe(error: unknown): string {
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
  return errorMessage(cause);
}
