// The request loops' HTTP/1.1 and HTTP/2 clients: the family's requests (protocols/clients.ts) on
// connections the load balancer places. Each keeps its connection while the server lets it; a
// response with `Connection: close` or a GOAWAY sends the next request to a new connection, which
// the LB places.
import { Agent } from 'node:http';
import http2, { type ClientHttp2Session } from 'node:http2';
import net from 'node:net';
import type { Duplex } from 'node:stream';
import { type Answer, http1Request, http2Request } from '../protocols/clients.js';
import type { Protocol, Verdict } from '../protocols/failures.js';
import type { LoadBalancer, Pod } from './load-balancer.js';
import type { TrafficRecorder } from './recorder.js';

export interface ClientContext {
  readonly lb: LoadBalancer;
  readonly recorder: TrafficRecorder;
  readonly path: string;
  readonly requestTimeoutMs: number;
}

export interface TrafficClient {
  readonly protocol: Protocol;
  /** Sends one request on the client's connection. Never rejects: a failure is recorded and gives false. */
  request(): Promise<boolean>;
  /** Ends the connection politely before the next request, which then connects through the LB. */
  reconnectWhenIdle(): void;
  /** Closes the connection politely; call once no request is in flight. */
  close(): Promise<void>;
}

function record(context: ClientContext, protocol: Protocol, pod: Pod, verdict: Verdict): boolean {
  if (verdict === undefined) context.recorder.succeeded(pod);
  else context.recorder.failed({ protocol, pod, ...verdict });
  return verdict === undefined;
}

/** The name clients put in Host; where they actually connect is the LB's choice, not DNS. */
const VIRTUAL_HOST = 'app.example';

/** One keep-alive socket, requests one at a time; Node's agent opens a new socket after `Connection: close`. */
export class Http1Client implements TrafficClient {
  readonly protocol = 'http1';
  private agent: Agent;
  /** The pod of the newest socket: with one socket and one request at a time, the one in use. */
  private pod: Pod = 'terminating';
  private reconnectRequested = false;

  constructor(private readonly context: ClientContext) {
    this.agent = this.newAgent();
  }

  reconnectWhenIdle(): void {
    this.reconnectRequested = true;
  }

  async request(): Promise<boolean> {
    if (this.reconnectRequested) {
      // Between requests the socket is idle: closing it now is the polite way to leave.
      this.reconnectRequested = false;
      this.agent.destroy();
      this.agent = this.newAgent();
    }
    const answer = await http1Request({ host: VIRTUAL_HOST, port: 80, path: this.context.path, agent: this.agent, timeoutMs: this.context.requestTimeoutMs });
    return record(this.context, this.protocol, this.pod, answer.failure);
  }

  close(): Promise<void> {
    this.agent.destroy();
    return Promise.resolve();
  }

  /** An agent whose one connection at a time goes wherever the LB says. */
  private newAgent(): Agent {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    agent.createConnection = (): Duplex => {
      const pod = this.context.lb.connectTarget();
      this.pod = pod;
      const socket = net.connect({ ...this.context.lb.endpoint(pod), noDelay: true });
      socket.once('connect', () => this.context.recorder.connected(pod));
      return socket;
    };
    return agent;
  }
}

interface Session {
  readonly session: ClientHttp2Session;
  readonly pod: Pod;
  /** False once the server said GOAWAY, the session failed, or the client is leaving it. */
  usable: boolean;
}

/** Sessions tried per request when its stream never left the client. */
const MAX_SEND_ATTEMPTS = 3;

/** One h2c (prior knowledge) session shared by several request loops; after a GOAWAY the next request opens a new one. */
export class Http2Client implements TrafficClient {
  readonly protocol = 'http2';
  private current: Session | undefined;
  private readonly sessions = new Set<Session>();
  private reconnectRequested = false;

  constructor(private readonly context: ClientContext) {}

  reconnectWhenIdle(): void {
    this.reconnectRequested = true;
  }

  async request(): Promise<boolean> {
    let answer: Answer | 'unsent' = 'unsent';
    let pod: Pod = 'terminating';
    for (let attempt = 0; attempt < MAX_SEND_ATTEMPTS && answer === 'unsent'; attempt += 1) {
      const session = this.acquire();
      pod = session.pod;
      answer = await http2Request(session.session, this.context.path, this.context.requestTimeoutMs);
      // A session that would not start a stream can carry no other; the server never saw the request.
      if (answer === 'unsent') session.usable = false;
    }
    const verdict: Verdict =
      answer === 'unsent' ? { kind: 'refused-stream', detail: `never sent in ${MAX_SEND_ATTEMPTS} attempts: every session said GOAWAY first` } : answer.failure;
    return record(this.context, this.protocol, pod, verdict);
  }

  async close(): Promise<void> {
    this.current = undefined;
    await Promise.all([...this.sessions].map((s) => closeSession(s, this.context.requestTimeoutMs)));
  }

  /** The session for the next stream: the current one while usable, else a new one through the LB. */
  private acquire(): Session {
    if (this.reconnectRequested && this.current !== undefined) {
      // close() is the polite way out: open streams (of the other loops) still finish.
      this.current.usable = false;
      this.current.session.close();
    }
    this.reconnectRequested = false;
    if (this.current?.usable !== true) this.current = this.open();
    return this.current;
  }

  private open(): Session {
    const pod = this.context.lb.connectTarget();
    const { host, port } = this.context.lb.endpoint(pod);
    const opened: Session = { session: http2.connect(`http://${host}:${port}`), pod, usable: true };
    const { session } = opened;
    this.sessions.add(opened);
    const retire = (): void => {
      opened.usable = false;
    };
    session.once('connect', () => this.context.recorder.connected(pod));
    // Node also starts closing the session itself on a NO_ERROR GOAWAY; either way no new streams.
    session.on('goaway', retire);
    // A session error ends its streams too, and each of those records the failure.
    session.on('error', retire);
    session.once('close', () => {
      retire();
      this.sessions.delete(opened);
    });
    return opened;
  }
}

/** session.close() waits for open streams; bounded, then destroyed, so stop() always ends. */
function closeSession(opened: Session, timeoutMs: number): Promise<void> {
  const { session } = opened;
  opened.usable = false;
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
