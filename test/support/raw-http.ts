// One HTTP request written byte for byte on a fresh TCP connection, for what Node's client cannot
// send: HTTP/1.0, no Host header, any method. The answer is read until its Content-Length is in
// (then the client closes, as balancers do: Envoy would wait a second for that) or the server
// closes, bounded in size and time.
import { connect } from 'node:net';

/** Enough for a status line, headers and a health check's body. */
const MAX_ANSWER_BYTES = 64 * 1024;

export interface RawAnswer {
  /** The status line, e.g. `HTTP/1.0 200 OK`. */
  readonly statusLine: string;
  readonly status: number;
  readonly text: string;
}

/** Sends `request` (e.g. `OPTIONS / HTTP/1.0\r\n\r\n`) to 127.0.0.1:port and reads the answer. */
export function rawRequest(port: number, request: string, timeoutMs = 5_000): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    const timer = setTimeout(
      () => socket.destroy(new Error(`no complete answer from port ${port} within ${timeoutMs} ms: ${JSON.stringify(text.slice(0, 200))}`)),
      timeoutMs,
    );
    socket.setEncoding('latin1');
    socket.once('connect', () => socket.write(request, 'latin1'));
    socket.on('data', (chunk: string) => {
      text += chunk;
      if (text.length > MAX_ANSWER_BYTES) socket.destroy(new Error(`answer from port ${port} longer than ${MAX_ANSWER_BYTES} bytes`));
      else if (complete(text, request.startsWith('HEAD '))) socket.destroy();
    });
    socket.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    socket.once('close', (hadError) => {
      clearTimeout(timer);
      if (hadError) return;
      const statusLine = text.split('\r\n', 1)[0] ?? '';
      const status = Number(/^HTTP\/\d\.\d (\d{3})/.exec(statusLine)?.[1] ?? Number.NaN);
      if (Number.isNaN(status)) reject(new Error(`port ${port} answered no HTTP status line: ${JSON.stringify(text.slice(0, 200))}`));
      else resolve({ statusLine, status, text });
    });
  });
}

/** True once the headers and as many body bytes as Content-Length says (none for HEAD) are in. */
function complete(text: string, head: boolean): boolean {
  const end = text.indexOf('\r\n\r\n');
  if (end < 0) return false;
  const length = /\r\ncontent-length: *(\d+)/i.exec(text.slice(0, end + 2))?.[1];
  if (length === undefined) return false;
  return head || text.length - (end + 4) >= Number(length);
}
