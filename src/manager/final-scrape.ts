// A drain's outcome lives in this process's counters only: a drain that ends its pod reaches
// Prometheus only if a scrape reads them before the manager exits. On stop, the manager can stay
// for that scrape: until every scraper that read /metrics lately has read the final counters, or
// a bound, never past kubelet's SIGKILL. Envoy is released before any of this begins.

/** `--final-scrape-timeout` and `--termination-grace-period`, as the manager acts on them. */
export interface FinalScrapeSettings {
  /** The longest stay, from the stop; also how recent a scrape must be for its scraper to be waited for. */
  readonly timeoutMs: number;
  /** The pod's grace period, counted from Envoy's preStop hook. Undefined: not given, only the timeout bounds the stay. */
  readonly gracePeriodMs: number | undefined;
}

/** kubelet's SIGKILL comes at the end of the grace period: the stay ends this long before it. */
export const BEFORE_SIGKILL_MS = 1_000;

/**
 * When the stay must end at the latest, or undefined for no stay. With a grace period, the
 * termination's start is when Envoy's preStop hook reached the manager (kubelet runs the hooks at
 * once): without it nothing tells how much of the grace period is left, so the manager does not stay.
 */
export function finalScrapeDeadline(settings: FinalScrapeSettings, stoppedAtMs: number, terminationStartMs: number | undefined): number | undefined {
  let deadline = stoppedAtMs + settings.timeoutMs;
  if (settings.gracePeriodMs !== undefined) {
    if (terminationStartMs === undefined) return undefined;
    deadline = Math.min(deadline, terminationStartMs + settings.gracePeriodMs - BEFORE_SIGKILL_MS);
  }
  return deadline > stoppedAtMs ? deadline : undefined;
}

interface Scrape {
  readonly atMs: number;
  /** The counters' version that scrape read. */
  readonly version: number;
}

/**
 * The scrapers, by remote address, that read `version`'s predecessors and not `version` itself,
 * among those whose last scrape came at or after `sinceMs` (one that stopped scraping is not waited for).
 */
export function scrapersBehind(scrapes: ReadonlyMap<string, Scrape>, version: number, sinceMs: number): string[] {
  return [...scrapes].filter(([, scrape]) => scrape.atMs >= sinceMs && scrape.version < version).map(([remote]) => remote);
}

/**
 * Who read /metrics, when, and which version of the counters. A scraper is its remote address
 * (Prometheus replicas are pods of their own; a scraper's port changes with each connection).
 */
export class ScrapeLog {
  readonly #scrapes = new Map<string, Scrape>();
  readonly #now: () => number;
  #onServed: (() => void) | undefined;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  /** A GET /metrics answer carrying `version` was handed to the kernel for `remote`. */
  served(remote: string, version: number): void {
    this.#scrapes.set(remote, { atMs: this.#now(), version });
    this.#onServed?.();
  }

  behind(version: number, sinceMs: number): string[] {
    return scrapersBehind(this.#scrapes, version, sinceMs);
  }

  /** Resolves true once no scraper of `behind(version, sinceMs)` is left behind, false at `deadlineMs`. */
  caughtUp(version: number, sinceMs: number, deadlineMs: number): Promise<boolean> {
    return new Promise((resolve) => {
      const done = (read: boolean): void => {
        clearTimeout(timer);
        this.#onServed = undefined;
        resolve(read);
      };
      const timer = setTimeout(() => done(false), Math.max(0, deadlineMs - this.#now()));
      this.#onServed = () => {
        if (this.behind(version, sinceMs).length === 0) done(true);
      };
      this.#onServed();
    });
  }
}
