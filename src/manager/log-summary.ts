// Per-waiter events (arrived, went away, refused) and releases in summary: a thousand waiters, or a
// client that opens and drops ten thousand requests, must not write a line each. The first event
// of a kind is logged at once; more of the same kind within SUMMARY_INTERVAL_MS become one line
// at the end of it, with the latest event's fields and how many it stands for.
import type { Logger } from '../shared/log.js';

const SUMMARY_INTERVAL_MS = 1_000;

type Level = 'info' | 'warn' | 'error';

interface Pending {
  readonly level: Level;
  readonly msg: string;
  fields: Record<string, unknown>;
  /** Events since the line logged at once. */
  repeated: number;
}

export class LogSummary {
  readonly #log: Logger;
  readonly #intervalMs: number;
  readonly #pending = new Map<string, Pending>();
  #timer: NodeJS.Timeout | undefined;

  constructor(log: Logger, intervalMs = SUMMARY_INTERVAL_MS) {
    this.#log = log;
    this.#intervalMs = intervalMs;
  }

  /** `kind` tells apart events that share a message (default: the message). */
  event(level: Level, fields: Record<string, unknown>, msg: string, kind: string = msg): void {
    const pending = this.#pending.get(kind);
    if (pending !== undefined) {
      pending.fields = fields;
      pending.repeated += 1;
      return;
    }
    this.#log[level](fields, msg);
    this.#pending.set(kind, { level, msg, fields, repeated: 0 });
    if (this.#timer === undefined) {
      this.#timer = setTimeout(() => this.flush(), this.#intervalMs);
      this.#timer.unref();
    }
  }

  /** Writes what is still counted (also before the process exits). */
  flush(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    for (const { level, msg, fields, repeated } of this.#pending.values()) {
      if (repeated > 0) this.#log[level]({ ...fields, repeated }, msg);
    }
    this.#pending.clear();
  }
}
