// One HTTP/1.1 keep-alive client: a single socket, requests one at a time. Node's agent does the
// connection handling a well-behaved client needs: a response with `Connection: close` is read to
// its end and its socket never carries another request; the next request opens a new socket,
// and this agent asks the LB where that socket goes.
import { Agent, type ClientRequest, type IncomingMessage, request } from 'node:http';
import net from 'node:net';
import type { Duplex } from 'node:stream';
import { checkResponse, classifyError, describeError, type FailureKind, parseContentLength } from './failures.js';
import type { Pod } from './load-balancer.js';
import type { ClientContext, TrafficClient } from './request-loop.js';

/** The name clients put in Host; where they actually connect is the LB's choice, not DNS. */
export const VIRTUAL_HOST = 'app.example';

/** An agent whose one connection at a time goes wherever `connect` says. */
class RoutedAgent extends Agent {
  constructor(private readonly connect: () => Duplex) {
    super({ keepAlive: true, maxSockets: 1 });
  }

  override createConnection(): Duplex {
    return this.connect();
  }
}

export class Http1Client implements TrafficClient {
  readonly protocol = 'http1';
  private agent: RoutedAgent;
  /** The pod of the newest socket: with one socket and one request at a time, the one in use. */
  private pod: Pod = 'terminating';
  private reconnectRequested = false;

  constructor(private readonly context: ClientContext) {
    this.agent = this.newAgent();
  }

  reconnectWhenIdle(): void {
    this.reconnectRequested = true;
  }

  request(): Promise<boolean> {
    if (this.reconnectRequested) {
      // Between requests the socket is idle: closing it now is the polite way to leave.
      this.reconnectRequested = false;
      this.agent.destroy();
      this.agent = this.newAgent();
    }
    return new Promise((resolve) => {
      let done = false;
      let req: ClientRequest | undefined;
      const finish = (failure: { kind: FailureKind; detail: string } | undefined): void => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        if (failure === undefined) {
          this.context.recorder.succeeded(this.pod);
        } else {
          this.context.recorder.failed({ protocol: this.protocol, pod: this.pod, ...failure });
        }
        resolve(failure === undefined);
      };
      const timer = setTimeout(() => {
        finish({ kind: 'timeout', detail: `no complete response within ${this.context.requestTimeoutMs} ms` });
        // The socket may still deliver the late answer: it must not carry another request.
        req?.destroy();
      }, this.context.requestTimeoutMs);

      req = request({ host: VIRTUAL_HOST, port: 80, path: this.context.path, agent: this.agent });
      req.on('error', (error) => finish({ kind: classifyError(error, false), detail: describeError(error) }));
      req.on('response', (res) => this.readResponse(res, finish));
      req.end();
    });
  }

  close(): Promise<void> {
    this.agent.destroy();
    return Promise.resolve();
  }

  private readResponse(res: IncomingMessage, finish: (failure: { kind: FailureKind; detail: string } | undefined) => void): void {
    const status = res.statusCode ?? 0;
    const contentLength = parseContentLength(res.headers['content-length']);
    let received = 0;
    let error: unknown;
    res.on('data', (chunk: Buffer) => (received += chunk.length));
    res.on('error', (cause) => (error = cause));
    // 'close' comes last whatever happened: after 'end', or after the socket died mid-body.
    res.on('close', () => {
      if (!res.complete) {
        const detail = `body ${received} of ${contentLength ?? 'unknown'} bytes: ${error === undefined ? 'connection closed' : describeError(error)}`;
        finish({ kind: 'truncated', detail });
        return;
      }
      finish(checkResponse(status, contentLength, received));
    });
  }

  private newAgent(): RoutedAgent {
    return new RoutedAgent(() => {
      const pod = this.context.lb.connectTarget();
      this.pod = pod;
      const socket = net.connect({ ...this.context.lb.endpoint(pod), noDelay: true });
      socket.once('connect', () => this.context.recorder.connected(pod));
      return socket;
    });
  }
}
