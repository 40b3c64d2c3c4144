// Envoy's two-step HTTP/2 drain: a GOAWAY "shutdown notice" with last-stream-id 2^31-1 (streams
// still welcome), then after drain_timeout a final GOAWAY with the real last stream id and a close
// once the open streams finish.
import type { Http2Session } from 'node:http2';
import type { Socket } from 'node:net';

/** 2^31 - 1: the largest stream id, so the notice refuses no stream. */
export const MAX_STREAM_ID = 0x7fffffff;
const FRAME_GOAWAY = 0x7;
const NO_ERROR = 0x0;

export interface DrainTimer {
  cancel(): void;
}

/**
 * Node's session.goaway() hands the frame to nghttp2 as a real GOAWAY, after which nghttp2
 * ignores new streams once none are open; Envoy's notice does not. So the notice is written as
 * raw bytes on the connection's own socket: whole frames, queued in order with nghttp2's writes.
 */
export function goawayShutdownNotice(socket: Socket): void {
  if (socket.destroyed) return;
  const frame = Buffer.alloc(9 + 8);
  frame.writeUIntBE(8, 0, 3); // payload length
  frame.writeUInt8(FRAME_GOAWAY, 3);
  frame.writeUInt8(0, 4); // flags
  frame.writeUInt32BE(0, 5); // stream 0: connection-level
  frame.writeUInt32BE(MAX_STREAM_ID, 9);
  frame.writeUInt32BE(NO_ERROR, 13);
  socket.write(frame);
}

/**
 * After drainTimeoutMs, session.close() sends GOAWAY(NO_ERROR, last processed stream id), lets
 * open streams finish, then closes the connection.
 */
export function startH2Drain(session: Http2Session, drainTimeoutMs: number): DrainTimer {
  const timer = setTimeout(() => {
    if (!session.closed && !session.destroyed) session.close();
  }, drainTimeoutMs);
  return { cancel: () => clearTimeout(timer) };
}
