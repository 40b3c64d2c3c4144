// gRPC over HTTP/2 as the protocol tests need it, both ends, on node:http2: a server-streaming
// call (one request message, then as many response messages as the test sends, then trailers with
// grpc-status). Messages carry gRPC's framing (a compressed flag and a 4-byte big-endian length);
// their bytes are opaque here, as a protobuf message would be to the proxy.
import { once } from 'node:events';
import http2, { type ClientHttp2Session, type ServerHttp2Stream } from 'node:http2';

export const GRPC_PATH = '/esm.test.Feed/Watch';

export function grpcMessage(payload: string): Buffer {
  const body = Buffer.from(payload);
  const header = Buffer.alloc(5);
  header.writeUInt32BE(body.length, 1);
  return Buffer.concat([header, body]);
}

/** Feeds DATA bytes in, calls `onMessage` for each complete gRPC message. */
export function grpcReader(onMessage: (payload: string) => void): (chunk: Buffer) => void {
  let buffered = Buffer.alloc(0);
  return (chunk) => {
    buffered = Buffer.concat([buffered, chunk]);
    while (buffered.length >= 5) {
      const length = buffered.readUInt32BE(1);
      if (buffered.length < 5 + length) return;
      onMessage(buffered.subarray(5, 5 + length).toString());
      buffered = buffered.subarray(5 + length);
    }
  };
}

/** The server's side of one call: send messages, then finish with grpc-status 0. */
export interface GrpcCall {
  send(payload: string): void;
  finish(): void;
}

/** Answers a call on GRPC_PATH: headers at once, then whatever `onCall`'s caller sends. */
export function answerGrpc(stream: ServerHttp2Stream, onCall: (call: GrpcCall) => void): void {
  stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
  stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
  stream.on('error', () => stream.destroy());
  onCall({ send: (payload) => void stream.write(grpcMessage(payload)), finish: () => void stream.end() });
}

export interface GrpcStreamClient {
  readonly session: ClientHttp2Session;
  /** Resolves with the next response message. */
  next(): Promise<string>;
  /** Resolves with the call's grpc-status once its trailers came; rejects if the stream was reset or closed without them. */
  readonly status: Promise<string>;
  /** GOAWAYs the session received: their error code and last stream id. */
  readonly goaways: ReadonlyArray<{ code: number; lastStreamId: number; at: number }>;
  close(): Promise<void>;
}

/** Starts a server-streaming call over h2c to `port` on loopback. */
export async function startGrpcStream(port: number): Promise<GrpcStreamClient> {
  const session = http2.connect(`http://127.0.0.1:${port}`);
  const goaways: Array<{ code: number; lastStreamId: number; at: number }> = [];
  session.on('goaway', (code, lastStreamId) => goaways.push({ code, lastStreamId, at: Date.now() }));
  session.on('error', () => undefined);
  const stream = session.request({ ':method': 'POST', ':path': GRPC_PATH, 'content-type': 'application/grpc', te: 'trailers' });
  stream.end(grpcMessage('watch'));
  const messages: string[] = [];
  const waiting: Array<(payload: string) => void> = [];
  stream.on(
    'data',
    grpcReader((payload) => {
      const next = waiting.shift();
      if (next === undefined) messages.push(payload);
      else next(payload);
    }),
  );
  const status = new Promise<string>((resolve, reject) => {
    stream.on('trailers', (trailers) => resolve(String(trailers['grpc-status'])));
    stream.on('close', () => reject(new Error(`the gRPC stream closed without trailers (RST code ${stream.rstCode})`)));
    stream.on('error', reject);
  });
  status.catch(() => undefined);
  const [headers] = (await once(stream, 'response')) as [http2.IncomingHttpHeaders];
  if (Number(headers[':status']) !== 200 || headers['content-type'] !== 'application/grpc') throw new Error(`not a gRPC answer: ${JSON.stringify(headers)}`);
  return {
    session,
    goaways,
    status,
    next: () =>
      new Promise((resolve) => {
        const queued = messages.shift();
        if (queued !== undefined) resolve(queued);
        else waiting.push(resolve);
      }),
    async close() {
      if (session.destroyed) return;
      const closed = once(session, 'close');
      session.destroy();
      await closed;
    },
  };
}
