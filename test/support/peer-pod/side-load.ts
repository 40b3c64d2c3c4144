// What a peer termination runs beside (or instead of) the HTTP load balancer's clients: a load of
// one listener's own protocol. Each behaves as a client behind a load balancer does: it keeps its
// connection while the pod answers on it, takes new connections to the pod until the balancer
// deprograms it, and goes elsewhere (stops) once the pod closed its connection after that.
import type { Backends } from '../protocols/backends.js';

/** Where a load connects: the bridged port of a pod port, the backend behind the pod, the pod's network namespace. */
export interface SideContext {
  port(inPod: number): number;
  readonly backend: Backends;
  /** A process in the pod's network namespace (for a UDP client run inside it). */
  readonly podPid: string;
}

export interface SideReport {
  readonly name: string;
  readonly failures: readonly string[];
  /** Answers (or echoes) the pod gave after time zero. */
  readonly servedAfterDeletion: number;
  /** Date.now() of the last answer on the pod, or the end of a held request or stream. */
  readonly busyUntil: number;
  /** Date.now() when the client began to end the stream it held open across the deletion: the drain cannot have ended before. */
  readonly heldUntil: number | undefined;
  /** Milliseconds from time zero to the pod's first Connection: close (or GOAWAY) to this client, if it saw one. */
  readonly toldToLeaveAfterMs: number | undefined;
}

export interface SideLoad {
  readonly name: string;
  /** Long HTTP/1.1 requests (`/slow/<ms>`) this load has in flight at time zero, counted at the backend. */
  readonly slowRequests: number;
  /** Connections it leaves idle: each must not hold the drain. */
  readonly idle: ReadonlyArray<{ closed(): boolean; close(): Promise<void> }>;
  /** Resolves once it has had answers from the pod and any stream it holds across the deletion is open. */
  ready(): Promise<void>;
  /** Sends its long requests, all loads' at once just before time zero, so that they overlap there. */
  startLong(): void;
  /** Time zero; new connections may go to the pod until `deprogrammedAt`. */
  terminationStarted(zero: number, deprogrammedAt: number): void;
  /** Resolves once the load has ended (it bounds itself in count and time). */
  finish(): Promise<SideReport>;
  /** Ends everything it still holds. */
  close(): Promise<void>;
}

export type SideLoadFactory = (context: SideContext) => Promise<SideLoad>;

/** A request, stream or exchange held open across the deletion lasts this long after time zero: past the earliest end of any drain with only idle connections left (2 s minimum drain + 2 s quiet period). */
export const HOLD_AFTER_DELETION_MS = 4_500;
/** The long HTTP requests: in flight at time zero, answered during the drain. */
export const LONG_REQUEST_MS = 1_500;
/** A client's pause between requests: load, not a busy loop. */
export const THINK_MS = 5;

/** The balancer's rule for a client: leave once deprogrammed and the pod closed the connection. */
export class Departure {
  zero: number | undefined;
  deprogrammedAt: number | undefined;
  toldToLeaveAt: number | undefined;
  /** Answers the pod gave after time zero. */
  served = 0;
  /** Date.now() of the pod's last answer (or of the end of a stream it held). */
  lastAnswer = 0;

  /** Time zero; new connections may go to the pod until `deprogrammedAt`. */
  start(zero: number, deprogrammedAt: number): void {
    this.zero = zero;
    this.deprogrammedAt = deprogrammedAt;
  }

  /** The pod answered the client. */
  answered(): void {
    this.lastAnswer = Date.now();
    if (this.zero !== undefined) this.served += 1;
  }

  /** The pod closed (or asked to close) the client's connection. */
  told(at = Date.now()): void {
    if (this.zero !== undefined && this.toldToLeaveAt === undefined && at >= this.zero) this.toldToLeaveAt = at;
  }

  /** Whether to send another request (the loop bounds itself too); `open`: the client's connection is still usable. */
  goOn(open: boolean): boolean {
    return this.deprogrammedAt === undefined || Date.now() < this.deprogrammedAt || open;
  }

  toldAfterMs(): number | undefined {
    return this.toldToLeaveAt === undefined || this.zero === undefined ? undefined : this.toldToLeaveAt - this.zero;
  }
}
