// The manager's Event per drain: sent after Envoy was released (never before, never in its way),
// once, with one log line whatever happens. A refusal of the pod's credentials (401, 403) ends
// the sending for good: nothing is attempted twice without permission.
import { randomBytes } from 'node:crypto';
import type { ReadyReport } from '../handoff/ready-file.js';
import type { Logger } from '../shared/log.js';
import { type CreateOutcome, createEvent, podDisruption } from './create-event.js';
import { drainEvent } from './drain-event.js';
import type { EventsTarget } from './in-cluster.js';
import { kubeEvent } from './kube-event.js';

export interface DrainEventsOptions {
  readonly create?: typeof createEvent;
  readonly readDisruption?: typeof podDisruption;
  readonly now?: () => Date;
}

export class DrainEvents {
  readonly #target: EventsTarget;
  readonly #log: Logger;
  readonly #create: typeof createEvent;
  readonly #readDisruption: typeof podDisruption;
  readonly #now: () => Date;
  readonly #inFlight = new Set<Promise<void>>();
  #refused = false;

  constructor(target: EventsTarget, log: Logger, options: DrainEventsOptions = {}) {
    this.#target = target;
    this.#log = log;
    this.#create = options.create ?? createEvent;
    this.#readDisruption = options.readDisruption ?? podDisruption;
    this.#now = options.now ?? (() => new Date());
  }

  /** Envoy was released just now after this drain. Returns at once; the pod is read first, for why it was terminated. */
  report(report: ReadyReport | 'unreadable'): void {
    if (this.#refused) return;
    const now = this.#now();
    const send = async (): Promise<void> => {
      const disruption = await this.#readDisruption(this.#target).catch(() => undefined);
      const event = kubeEvent(this.#target.pod, drainEvent(report, now.getTime(), disruption), now, randomBytes(8).toString('hex'));
      const fields = { reason: event.reason, type: event.type, ...(disruption === undefined ? {} : { disruption }) };
      await this.#create(this.#target, event).then(
        (outcome) => this.#say(fields, outcome),
        (error: unknown) => this.#log.warn({ ...fields, why: String(error) }, 'could not create the drain event'),
      );
    };
    const sent = send();
    const tracked = sent.finally(() => this.#inFlight.delete(tracked));
    this.#inFlight.add(tracked);
  }

  /** Resolves when every Event sent so far was answered or timed out (bounded by the send timeout). */
  async settled(): Promise<void> {
    await Promise.all([...this.#inFlight]);
  }

  #say(fields: Record<string, string>, outcome: CreateOutcome): void {
    if (outcome.ok) {
      this.#log.info({ ...fields, status: outcome.status }, 'drain event created');
      return;
    }
    if (outcome.status === 401 || outcome.status === 403) this.#refused = true;
    const more = this.#refused ? ' (no further events: the service account lacks permission)' : '';
    this.#log.warn({ ...fields, status: outcome.status ?? null, why: outcome.why }, `could not create the drain event${more}`);
  }
}
