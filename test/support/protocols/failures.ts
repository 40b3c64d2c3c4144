// How every client of the family says a request failed: one kind per way a user's client sees it
// fail, mapped from socket and protocol errors, and a short detail.
export type Protocol = 'http1' | 'http2';

export type FailureKind = 'refused' | 'reset' | 'status' | 'truncated' | 'timeout' | 'refused-stream' | 'other';

/** Undefined: a complete 2xx answer. */
export type Verdict = { readonly kind: FailureKind; readonly detail: string } | undefined;

/**
 * The connection or stream went away under the request: the peer reset or closed it, a write hit a
 * closed socket, or an HTTP/2 stream or session ended with an error code (RST_STREAM, GOAWAY).
 */
const RESET_CODES = new Set([
  'ECONNRESET',
  'EPIPE',
  'ECONNABORTED',
  'ERR_STREAM_PREMATURE_CLOSE',
  'ERR_HTTP2_STREAM_CANCEL',
  'ERR_HTTP2_STREAM_ERROR',
  'ERR_HTTP2_SESSION_ERROR',
]);

/** Node wraps the socket error of a session into its streams' errors as `cause`. */
function codes(error: unknown): string[] {
  const found: string[] = [];
  let current: unknown = error;
  for (let depth = 0; depth < 4 && typeof current === 'object' && current !== null; depth += 1) {
    const code: unknown = (current as { code?: unknown }).code;
    if (typeof code === 'string') found.push(code);
    current = (current as { cause?: unknown }).cause;
  }
  return found;
}

/**
 * Classifies an error that ended a request. `headersReceived` turns a lost connection into
 * 'truncated': the server had answered, but the body never arrived in full.
 */
export function classifyError(error: unknown, headersReceived: boolean): FailureKind {
  const found = codes(error);
  if (found.includes('ECONNREFUSED')) return 'refused';
  if (found.some((code) => RESET_CODES.has(code))) return headersReceived ? 'truncated' : 'reset';
  return 'other';
}

/** A short, stable description for Failure.detail: the error code(s) then the message. */
export function describeError(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const found = codes(error);
  return found.length === 0 ? message : `${found.join(' <- ')}: ${message}`;
}

/** A response's verdict once it ended: undefined when it is a success. */
export function checkResponse(status: number, contentLength: number | undefined, received: number): Verdict {
  if (contentLength !== undefined && received !== contentLength) {
    return { kind: 'truncated', detail: `body ${received} of ${contentLength} bytes (status ${status})` };
  }
  if (status < 200 || status > 299) return { kind: 'status', detail: `status ${status}` };
  return undefined;
}

/** A content-length header as a number, or undefined when absent or unusable. */
export function parseContentLength(value: string | string[] | number | undefined): number | undefined {
  const raw = Array.isArray(value) ? value[0] : value;
  if (raw === undefined) return undefined;
  const length = Number(raw);
  return Number.isInteger(length) && length >= 0 ? length : undefined;
}
