// What the HTTP/1.1 and HTTP/2 clients share: their dependencies, their surface, and the loop
// that keeps one of them sending requests back to back.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Protocol } from './failures.js';
import type { LoadBalancer } from './load-balancer.js';
import type { TrafficRecorder } from './recorder.js';

/** After a failure a loop waits at least this long, as a backing-off client would; the failure is still recorded. */
export const FAILURE_PAUSE_MS = 50;

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

export interface LoopOptions {
  readonly thinkTimeMs: number;
  readonly signal: AbortSignal;
  /** Called once, after the loop's first request ended (either way) or when the loop ends. */
  readonly onFirstDone: () => void;
  /** Called after each request ended (either way), with Date.now() from just before it was sent. */
  readonly onRequestDone?: (sentAt: number) => void;
}

/** Sends requests until the signal aborts. A request in flight is always awaited, never abandoned. */
export async function runLoop(client: TrafficClient, options: LoopOptions): Promise<void> {
  const { signal, thinkTimeMs, onFirstDone, onRequestDone } = options;
  try {
    while (!signal.aborted) {
      const sentAt = Date.now();
      const ok = await client.request();
      onRequestDone?.(sentAt);
      onFirstDone();
      await pause(ok ? thinkTimeMs : Math.max(thinkTimeMs, FAILURE_PAUSE_MS), signal);
    }
  } finally {
    onFirstDone();
  }
}

async function pause(ms: number, signal: AbortSignal): Promise<void> {
  try {
    await sleep(ms, undefined, { signal });
  } catch {
    // Aborted: the loop condition sees it and stops.
  }
}
