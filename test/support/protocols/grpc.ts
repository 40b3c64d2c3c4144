// gRPC over HTTP/2 as the protocol tests need it, both ends, on node:http2: a server-streaming
// call (one request message, then as many response messages as the test sends, then trailers with
// grpc-status). Messages carry gRPC's framing (a compressed flag and a 4-byte big-endian length);
// their bytes are opaque here, as a protobuf message would be to the proxy.
import { once } from 'node:events';
import type http2 from 'node:http2';
import type { ClientHttp2Session, ClientHttp2Stream, ServerHttp2Stream } from 'node:http2';
import { type Http2Connection, http2Connection } from './clients.js';

export const GRPC_PATH = '/esm.test.Feed/Watch';
/** The Greeter service the Envoy Gateway fixture routes (`pathSeparatedPrefix: /helloworld.Greeter`). */
export const GRPC_UNARY_PATH = '/helloworld.Greeter/SayHello';
export const GRPC_STREAM_PATH = '/helloworld.Greeter/SayHelloStream';

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

export interface GrpcCallClient {
  readonly stream: ClientHttp2Stream;
  /** Resolves with the call's grpc-status once its trailers came; rejects if the stream was reset or closed without them. */
  readonly status: Promise<string>;
}

/** Opens a call on `session`; `onMessage` sees each response message. The caller writes (and ends) the request side. */
export function grpcCall(session: ClientHttp2Session, path: string, onMessage: (payload: string) => void, authority?: string): GrpcCallClient {
  const headers = { ':method': 'POST', ':path': path, 'content-type': 'application/grpc', te: 'trailers' };
  const stream = session.request(authority === undefined ? headers : { ...headers, ':authority': authority });
  stream.on('data', grpcReader(onMessage));
  const status = new Promise<string>((resolve, reject) => {
    stream.on('trailers', (trailers) => resolve(String(trailers['grpc-status'])));
    stream.on('close', () => reject(new Error(`the gRPC call closed without trailers (RST code ${stream.rstCode})`)));
    stream.on('error', reject);
  });
  status.catch(() => undefined);
  return { stream, status };
}

export interface GrpcStreamClient extends Http2Connection {
  /** Resolves with the next response message. */
  next(): Promise<string>;
  readonly status: Promise<string>;
}

/** Starts a server-streaming call (GRPC_PATH) over h2c to `port` on loopback. */
export async function startGrpcStream(port: number): Promise<GrpcStreamClient> {
  const channel = await http2Connection(port);
  const messages: string[] = [];
  const waiting: Array<(payload: string) => void> = [];
  const { stream, status } = grpcCall(channel.session, GRPC_PATH, (payload) => {
    const next = waiting.shift();
    if (next === undefined) messages.push(payload);
    else next(payload);
  });
  stream.end(grpcMessage('watch'));
  const [headers] = (await once(stream, 'response')) as [http2.IncomingHttpHeaders];
  if (Number(headers[':status']) !== 200 || headers['content-type'] !== 'application/grpc') throw new Error(`not a gRPC answer: ${JSON.stringify(headers)}`);
  return {
    ...channel,
    status,
    next: () =>
      new Promise((resolve) => {
        const queued = messages.shift();
        if (queued !== undefined) resolve(queued);
        else waiting.push(resolve);
      }),
  };
}
