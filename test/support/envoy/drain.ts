// The server-wide drain sequence started by POST /drain_listeners?graceful, and the per-response
// drainClose() question the HTTP connection manager asks while encoding each response.
import type { DrainStrategy, DrainType, TrafficDirection } from './options.js';

export interface DrainTarget {
  drainType: DrainType;
  trafficDirection: TrafficDirection;
}

export interface DrainSequenceOptions {
  strategy: DrainStrategy;
  drainTimeSeconds: number;
  now?: () => number;
  /** A non-negative integer; Envoy draws a fresh one for every question. */
  random?: () => number;
}

export class DrainSequence {
  private readonly now: () => number;
  private readonly random: () => number;
  private startedAtMs: number | undefined;
  private inboundOnly = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly options: DrainSequenceOptions) {
    this.now = options.now ?? Date.now;
    this.random = options.random ?? (() => Math.floor(Math.random() * 2 ** 32));
  }

  get startedAt(): number | undefined {
    return this.startedAtMs;
  }

  get deadline(): number | undefined {
    return this.startedAtMs === undefined ? undefined : this.startedAtMs + this.options.drainTimeSeconds * 1000;
  }

  /**
   * Starts the sequence; onDeadline runs once drain time has elapsed. Returns false, changing
   * nothing, when a sequence already runs: Envoy ignores repeated graceful calls whatever their params.
   */
  start(inboundOnly: boolean, onDeadline: () => void): boolean {
    if (this.startedAtMs !== undefined) return false;
    this.startedAtMs = this.now();
    this.inboundOnly = inboundOnly;
    this.timer = setTimeout(onDeadline, this.options.drainTimeSeconds * 1000);
    return true;
  }

  /** Whether a listener is covered: inboundonly limits the sequence to INBOUND listeners. */
  covers(target: DrainTarget): boolean {
    return this.startedAtMs !== undefined && (!this.inboundOnly || target.trafficDirection === 'INBOUND');
  }

  /**
   * Should the response being encoded now tell its connection to close?
   * DEFAULT listeners say yes at once while health checks fail; otherwise only a running sequence
   * can say yes: always when immediate or past the deadline, and for gradual with a probability
   * that grows with each whole second elapsed.
   */
  drainClose(target: DrainTarget, healthCheckFailed: boolean): boolean {
    if (target.drainType === 'DEFAULT' && healthCheckFailed) return true;
    const startedAt = this.startedAtMs;
    if (startedAt === undefined || !this.covers(target)) return false;
    const now = this.now();
    const drainMs = this.options.drainTimeSeconds * 1000;
    if (this.options.strategy === 'immediate' || now - startedAt >= drainMs) return true;
    const elapsedSeconds = Math.floor((now - startedAt) / 1000);
    return elapsedSeconds > this.random() % this.options.drainTimeSeconds;
  }

  dispose(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }
}
