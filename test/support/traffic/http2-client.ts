// One HTTP/2 (h2c, prior knowledge) client: a single session shared by several request loops.
// After a GOAWAY, streams already open finish normally but no new stream starts on that session:
// the next request opens a new session, which the LB places.
import http2, { type ClientHttp2Session, type ClientHttp2Stream } from 'node:http2';
import { checkResponse, classifyError, describeError, type FailureKind, parseContentLength } from './failures.js';
import type { Pod } from './load-balancer.js';
import type { ClientContext, TrafficClient } from './request-loop.js';

const { NGHTTP2_CANCEL, NGHTTP2_NO_ERROR, NGHTTP2_REFUSED_STREAM } = http2.constants;

interface Connection {
  readonly session: ClientHttp2Session;
  readonly pod: Pod;
  /** False once the server said GOAWAY, the session failed, or the client is leaving it. */
  usable: boolean;
}

type Verdict = { kind: FailureKind; detail: string } | undefined;

/** The HTTP/2 HEADERS frame type: the first frame of a request. */
const FRAME_HEADERS = 0x1;
/** Sessions tried per request when its stream never left the client (see readStream). */
const MAX_SEND_ATTEMPTS = 3;

export class Http2Client implements TrafficClient {
  readonly protocol = 'http2';
  private current: Connection | undefined;
  private readonly connections = new Set<Connection>();
  private reconnectRequested = false;

  constructor(private readonly context: ClientContext) {}

  reconnectWhenIdle(): void {
    this.reconnectRequested = true;
  }

  async request(): Promise<boolean> {
    let outcome: Verdict | 'unsent' = 'unsent';
    let pod: Pod = 'terminating';
    for (let attempt = 0; attempt < MAX_SEND_ATTEMPTS && outcome === 'unsent'; attempt += 1) {
      const connection = this.acquire();
      pod = connection.pod;
      outcome = await this.send(connection);
      // A session that would not start a stream can carry no other.
      if (outcome === 'unsent') connection.usable = false;
    }
    const verdict: Verdict =
      outcome === 'unsent' ? { kind: 'refused-stream', detail: `never sent in ${MAX_SEND_ATTEMPTS} attempts: every session said GOAWAY first` } : outcome;
    if (verdict === undefined) {
      this.context.recorder.succeeded(pod);
    } else {
      this.context.recorder.failed({ protocol: this.protocol, pod, ...verdict });
    }
    return verdict === undefined;
  }

  async close(): Promise<void> {
    this.current = undefined;
    await Promise.all([...this.connections].map((connection) => closeSession(connection, this.context.requestTimeoutMs)));
  }

  /** The session for the next stream: the current one while usable, else a new one through the LB. */
  private acquire(): Connection {
    if (this.reconnectRequested && this.current !== undefined) {
      // close() is the polite way out: open streams (of the other loops) still finish.
      this.current.usable = false;
      this.current.session.close();
    }
    this.reconnectRequested = false;
    if (this.current?.usable === true) return this.current;
    this.current = this.open();
    return this.current;
  }

  private open(): Connection {
    const pod = this.context.lb.connectTarget();
    const { host, port } = this.context.lb.endpoint(pod);
    const session = http2.connect(`http://${host}:${port}`);
    const connection: Connection = { session, pod, usable: true };
    this.connections.add(connection);
    const retire = (): void => {
      connection.usable = false;
    };
    session.once('connect', () => this.context.recorder.connected(pod));
    // Node also starts closing the session itself on a NO_ERROR GOAWAY; either way no new streams.
    session.on('goaway', retire);
    // A session error ends its streams too, and each of those records the failure.
    session.on('error', retire);
    session.once('close', () => {
      retire();
      this.connections.delete(connection);
    });
    return connection;
  }

  /** One stream on one session: its verdict, or 'unsent' when its HEADERS never left the client. */
  private send(connection: Connection): Promise<Verdict | 'unsent'> {
    return new Promise((resolve) => {
      let stream: ClientHttp2Stream | undefined;
      const timer = setTimeout(() => {
        resolve({ kind: 'timeout', detail: `no complete response within ${this.context.requestTimeoutMs} ms` });
        stream?.close(NGHTTP2_CANCEL);
      }, this.context.requestTimeoutMs);
      const finish = (outcome: Verdict | 'unsent'): void => {
        clearTimeout(timer);
        resolve(outcome);
      };
      try {
        stream = connection.session.request({ ':method': 'GET', ':path': this.context.path }, { endStream: true });
      } catch (error) {
        // A GOAWAY Node has already read but not yet announced with its 'goaway' event: the
        // request never left the client, so it goes out again on a new session.
        if ((error as { code?: unknown }).code === 'ERR_HTTP2_GOAWAY_SESSION') {
          connection.usable = false;
          finish('unsent');
          return;
        }
        // acquire() never hands out a closed session otherwise, so this is a fixture bug worth seeing.
        finish({ kind: 'other', detail: describeError(error) });
        return;
      }
      this.readStream(stream, finish);
    });
  }

  private readStream(stream: ClientHttp2Stream, finish: (outcome: Verdict | 'unsent') => void): void {
    let status: number | undefined;
    let contentLength: number | undefined;
    let received = 0;
    let error: unknown;
    let unsent = false;
    stream.on('response', (headers) => {
      status = Number(headers[':status']);
      contentLength = parseContentLength(headers['content-length']);
    });
    stream.on('data', (chunk: Buffer) => (received += chunk.length));
    stream.on('error', (cause) => (error = cause));
    // nghttp2 will not start a stream once a GOAWAY came in (RFC 9113 6.8), even one requested just
    // before it was read: the HEADERS frame fails to send and the stream closes as REFUSED_STREAM.
    // The server never saw that request, so it goes out again on a new session.
    stream.on('frameError', (type: number) => (unsent ||= type === FRAME_HEADERS));
    // Node ends the readable side even when the session dies mid-body, so 'end' proves nothing:
    // the verdict waits for 'close' and looks at the reset code and the byte count.
    stream.on('close', () => finish(unsent ? 'unsent' : streamVerdict({ status, contentLength, received, error, rstCode: stream.rstCode })));
  }
}

interface StreamOutcome {
  status: number | undefined;
  contentLength: number | undefined;
  received: number;
  error: unknown;
  rstCode: number | undefined;
}

function streamVerdict(outcome: StreamOutcome): Verdict {
  const { status, contentLength, received, error, rstCode } = outcome;
  if (rstCode === NGHTTP2_REFUSED_STREAM) {
    return { kind: 'refused-stream', detail: 'stream refused (REFUSED_STREAM or above the GOAWAY last-stream-id)' };
  }
  const headersReceived = status !== undefined;
  if (status !== undefined) {
    const complete = contentLength === undefined ? rstCode === NGHTTP2_NO_ERROR || rstCode === undefined : received === contentLength;
    if (complete) return checkResponse(status, contentLength, received);
  }
  if (error !== undefined) {
    return { kind: classifyError(error, headersReceived), detail: describeError(error) };
  }
  const detail = `stream closed with code ${rstCode ?? 'none'} after ${received} of ${contentLength ?? 'unknown'} body bytes`;
  return { kind: headersReceived ? 'truncated' : 'reset', detail };
}

/** session.close() waits for open streams; bounded, then destroyed, so stop() always ends. */
function closeSession(connection: Connection, timeoutMs: number): Promise<void> {
  const { session } = connection;
  connection.usable = false;
  if (session.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => session.destroy(), timeoutMs);
    session.once('close', () => {
      clearTimeout(timer);
      resolve();
    });
    // A session already closing (after GOAWAY or churn) only needs the wait.
    if (!session.closed) session.close();
  });
}
