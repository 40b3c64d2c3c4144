// Request parsing and response writing shared by every admin handler, following Envoy's admin
// rules: merged slashes, presence-only boolean params, params in a form body, fixed headers.
import type { IncomingMessage, ServerResponse } from 'node:http';

export const TEXT_PLAIN = 'text/plain; charset=UTF-8';
export const APPLICATION_JSON = 'application/json';
const FORM_URLENCODED = 'application/x-www-form-urlencoded';

/** Query parameters: the first value of each key wins; a key without '=' has the value ''. */
export class QueryParams {
  private readonly values = new Map<string, string>();

  constructor(raw: string, plusIsSpace = false) {
    for (const part of raw.split('&')) {
      if (part === '') continue;
      const eq = part.indexOf('=');
      const key = decodeComponent(eq < 0 ? part : part.slice(0, eq), plusIsSpace);
      const value = eq < 0 ? '' : decodeComponent(part.slice(eq + 1), plusIsSpace);
      if (!this.values.has(key)) this.values.set(key, value);
    }
  }

  get(key: string): string | undefined {
    return this.values.get(key);
  }

  /** Envoy's boolean params are set by presence: `?graceful=false` still means graceful. */
  has(key: string): boolean {
    return this.values.has(key);
  }

  get size(): number {
    return this.values.size;
  }
}

export interface AdminRequest {
  method: string;
  /** The path before '?', repeated slashes merged: what is matched against handler names. */
  path: string;
  /** The raw path as sent, before merging, for the call log. */
  rawPath: string;
  rawQuery: string;
  params: QueryParams;
}

export function splitTarget(target: string): { rawPath: string; rawQuery: string } {
  const q = target.indexOf('?');
  return q < 0 ? { rawPath: target, rawQuery: '' } : { rawPath: target.slice(0, q), rawQuery: target.slice(q + 1) };
}

/** Reads the body, then builds the params: from the query, or else from a form-encoded body. */
export async function readAdminRequest(req: IncomingMessage): Promise<AdminRequest> {
  const { rawPath, rawQuery } = splitTarget(req.url ?? '/');
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  let params = new QueryParams(rawQuery);
  const contentType = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
  if (params.size === 0 && contentType === FORM_URLENCODED) {
    params = new QueryParams(Buffer.concat(chunks).toString('utf8'), true);
  }
  return { method: req.method ?? 'GET', path: rawPath.replace(/\/{2,}/g, '/'), rawPath, rawQuery, params };
}

export interface AdminResponse {
  status: number;
  body: string;
  contentType?: string;
}

export function sendAdminResponse(res: ServerResponse, response: AdminResponse, onFlushed?: () => void): void {
  const body = Buffer.from(response.body, 'utf8');
  res.writeHead(response.status, {
    'content-type': response.contentType ?? TEXT_PLAIN,
    'content-length': body.length,
    'cache-control': 'no-cache, max-age=0',
    'x-content-type-options': 'nosniff',
    server: 'envoy',
  });
  res.end(body, onFlushed);
}

export const text = (status: number, body: string): AdminResponse => ({ status, body });
export const json = (status: number, body: string): AdminResponse => ({ status, body, contentType: APPLICATION_JSON });

/** Percent-decoding that, like Envoy's, leaves malformed escapes as they are instead of failing. */
function decodeComponent(value: string, plusIsSpace: boolean): string {
  const source = plusIsSpace ? value.replaceAll('+', ' ') : value;
  if (!source.includes('%')) return source;
  const bytes: number[] = [];
  const raw = Buffer.from(source, 'utf8');
  for (let i = 0; i < raw.length; i++) {
    const byte = raw[i] ?? 0;
    const hex = byte === 0x25 ? raw.subarray(i + 1, i + 3).toString('latin1') : '';
    if (/^[0-9A-Fa-f]{2}$/.test(hex)) {
      bytes.push(parseInt(hex, 16));
      i += 2;
    } else {
      bytes.push(byte);
    }
  }
  return Buffer.from(bytes).toString('utf8');
}
