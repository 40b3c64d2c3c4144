// What the manager has seen since it started, in Prometheus' text format (0.0.4) for GET /metrics.
// Plain counters bumped where things happen; the text is built only when scraped: no timer, no
// work at idle.
import { DRAIN_RESULTS, isDrainResult, UNKNOWN_RESULT } from '../handoff/drain-result.js';
import { releaseDelay } from '../handoff/ready-file.js';
import type { ReadyContent } from './ready-watch.js';

/** The Content-Type of the text exposition format. */
export const METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

const PREFIX = 'envoy_shutdown_manager';
/** Every result a drain can report, and `unknown` for a ready file that holds no report: each exported from 0. */
const RESULTS = [...DRAIN_RESULTS, UNKNOWN_RESULT];
/** Drain durations, seconds: the chart's minimum drain (10 s) to its longest timeouts. */
const DURATION_BUCKETS = [0.5, 1, 2.5, 5, 10, 15, 20, 30, 45, 60, 90, 120, 180, 300, 600];
/** Envoy held after its last connection closed, seconds: a read interval to a long quiet period. */
const HELD_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

export type Handshake = 'ready' | 'drain';

/**
 * Every answer each endpoint gives (ready: released, no report, too many waiters; drain: released,
 * no token, no report), exported from 0: a rate or increase() sees a counter's first rise only
 * from a sample before it, and a pod's first 500 is often its only one.
 */
const HANDSHAKES: Readonly<Record<Handshake, readonly number[]>> = { ready: [200, 500, 503], drain: [200, 403, 500] };

interface LastDrain {
  readonly elapsedMs: number;
  readonly connections: number | null;
  readonly finishedAtMs: number | undefined;
}

export class ManagerMetrics {
  /** By `endpoint code`. */
  readonly #handshakes = new Map<string, number>(
    Object.entries(HANDSHAKES).flatMap(([endpoint, codes]) => codes.map((code) => [`${endpoint} ${code}`, 0] as const)),
  );
  #readyFileReleases = 0;
  readonly #drains = new Map<string, number>(RESULTS.map((result) => [result, 0]));
  /** By result: every drain that reported how long it took. */
  readonly #durations = new Map<string, Histogram>(DRAIN_RESULTS.map((result) => [result, new Histogram(DURATION_BUCKETS)]));
  readonly #heldAfterLastConnection = new Histogram(HELD_BUCKETS);
  #unknownCountTimeouts = 0;
  #last: LastDrain | undefined;
  #lastKey: string | undefined;
  #version = 0;

  /** Rises with every change to the counters: a scrape that read the current version read them all. */
  get version(): number {
    return this.#version;
  }

  /** A /shutdown/ready or /shutdown/drain request was answered with `status`. */
  answered(endpoint: Handshake, status: number): void {
    const key = `${endpoint} ${status}`;
    this.#handshakes.set(key, (this.#handshakes.get(key) ?? 0) + 1);
    this.#version += 1;
  }

  /** The ready file appeared and released the waiters. */
  readyFileRelease(): void {
    this.#readyFileReleases += 1;
    this.#version += 1;
  }

  /**
   * Envoy was released after a drain that reported `content`. False when that drain was already
   * counted: waiters arriving after a release, or the manager's last look at stop, see its file again.
   */
  drainSeen(content: ReadyContent, releasedAt = Date.now()): boolean {
    const key = content === 'unreadable' ? 'unreadable' : `${content.finishedAt} ${content.elapsedMs}`;
    if (key === this.#lastKey) return false;
    this.#lastKey = key;
    this.#version += 1;
    const result = content === 'unreadable' || !isDrainResult(content.result) ? UNKNOWN_RESULT : content.result;
    this.#drains.set(result, (this.#drains.get(result) ?? 0) + 1);
    if (content !== 'unreadable') {
      this.#durations.get(result)?.observe(content.elapsedMs / 1000);
      // Unknown is not zero: a timeout without a count is told apart, as its Event is.
      if (result === 'timeout' && content.connections === null) this.#unknownCountTimeouts += 1;
      const delay = releaseDelay(content, releasedAt);
      if (delay?.since === 'last-connection') this.#heldAfterLastConnection.observe(delay.ms / 1000);
      const finishedAtMs = Date.parse(content.finishedAt);
      this.#last = { elapsedMs: content.elapsedMs, connections: content.connections, finishedAtMs: Number.isNaN(finishedAtMs) ? undefined : finishedAtMs };
    }
    return true;
  }

  /** The exposition, with `waiting` read from the server at the scrape. */
  render(waiting: number): string {
    const lines: string[] = [];
    const family = (
      name: string,
      type: 'counter' | 'gauge' | 'histogram',
      help: string,
      samples: ReadonlyArray<readonly [labels: string, value: number]>,
    ): void => {
      lines.push(`# HELP ${PREFIX}_${name} ${help}`, `# TYPE ${PREFIX}_${name} ${type}`);
      // A histogram's samples carry their own suffix (_bucket, _sum, _count) before their labels.
      for (const [labels, value] of samples) lines.push(`${PREFIX}_${name}${labels} ${formatValue(value)}`);
    };
    family(
      'handshakes_total',
      'counter',
      'Envoy preStop requests answered: endpoint ready (/shutdown/ready) or drain (/shutdown/drain), by HTTP status.',
      [...this.#handshakes].map(([key, count]) => {
        const [endpoint, code] = key.split(' ');
        return [`{endpoint="${endpoint ?? ''}",code="${code ?? ''}"}`, count] as const;
      }),
    );
    family('waiters', 'gauge', '/shutdown/ready requests held open now.', [['', waiting]]);
    family('ready_file_releases_total', 'counter', 'Times the ready file appeared and released the waiting requests.', [['', this.#readyFileReleases]]);
    family(
      'drains_total',
      'counter',
      'Drains whose end released Envoy, by the result they reported (unknown: the ready file held no report).',
      [...this.#drains].map(([result, count]) => [`{result="${result}"}`, count] as const),
    );
    family(
      'unknown_count_timeouts_total',
      'counter',
      'Drains that timed out with the connection count unknown (unknown is not zero); also counted in drains_total{result="timeout"}.',
      [['', this.#unknownCountTimeouts]],
    );
    family(
      'drain_duration_seconds',
      'histogram',
      'How long each drain took, by its result.',
      [...this.#durations].flatMap(([result, histogram]) => histogram.samples(`result="${result}"`)),
    );
    family(
      'released_after_last_connection_seconds',
      'histogram',
      "How long Envoy was held after a completed drain's last connection was seen closed, until its release.",
      this.#heldAfterLastConnection.samples(''),
    );
    const last = this.#last;
    if (last !== undefined) {
      family('last_drain_duration_seconds', 'gauge', 'How long the last drain took.', [['', last.elapsedMs / 1000]]);
      family('last_drain_connections', 'gauge', 'Connections left when the last drain ended (NaN: the count was unknown, which is not zero).', [
        ['', last.connections ?? Number.NaN],
      ]);
      if (last.finishedAtMs !== undefined)
        family('last_drain_end_timestamp_seconds', 'gauge', 'When the last drain ended, in seconds since the epoch.', [['', last.finishedAtMs / 1000]]);
    }
    return `${lines.join('\n')}\n`;
  }
}

/** Cumulative buckets, as Prometheus' histograms count: each observation in every bucket at or above it. */
class Histogram {
  readonly #bounds: readonly number[];
  readonly #counts: number[];
  #sum = 0;
  #count = 0;

  constructor(bounds: readonly number[]) {
    this.#bounds = bounds;
    this.#counts = bounds.map(() => 0);
  }

  observe(value: number): void {
    this.#bounds.forEach((bound, index) => {
      if (value <= bound) this.#counts[index] = (this.#counts[index] ?? 0) + 1;
    });
    this.#sum += value;
    this.#count += 1;
  }

  /** `_bucket{…le}`, `_sum`, `_count`, with `labels` (`a="b"` or empty) on each. */
  samples(labels: string): Array<readonly [string, number]> {
    const withLe = (le: string): string => `_bucket{${labels === '' ? '' : `${labels},`}le="${le}"}`;
    const plain = labels === '' ? '' : `{${labels}}`;
    return [
      ...this.#bounds.map((bound, index) => [withLe(String(bound)), this.#counts[index] ?? 0] as const),
      [withLe('+Inf'), this.#count],
      [`_sum${plain}`, this.#sum],
      [`_count${plain}`, this.#count],
    ];
  }
}

function formatValue(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  return String(value);
}
