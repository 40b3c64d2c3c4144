// What the manager has seen since it started, in Prometheus' text format (0.0.4) for GET /metrics.
// Plain counters bumped where things happen; the text is built only when scraped: no timer, no
// work at idle.
import { DRAIN_RESULTS, isDrainResult, UNKNOWN_RESULT } from '../handoff/drain-result.js';
import type { ReadyContent } from './ready-watch.js';

/** The Content-Type of the text exposition format. */
export const METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

const PREFIX = 'envoy_shutdown_manager';
/** Every result a drain can report, and `unknown` for a ready file that holds no report: each exported from 0. */
const RESULTS = [...DRAIN_RESULTS, UNKNOWN_RESULT];

export type Handshake = 'ready' | 'drain';

interface LastDrain {
  readonly elapsedMs: number;
  readonly connections: number | null;
  readonly finishedAtMs: number | undefined;
}

export class ManagerMetrics {
  /** By `endpoint code`. */
  readonly #handshakes = new Map<string, number>();
  #readyFileReleases = 0;
  readonly #drains = new Map<string, number>(RESULTS.map((result) => [result, 0]));
  #last: LastDrain | undefined;
  #lastKey: string | undefined;

  /** A /shutdown/ready or /shutdown/drain request was answered with `status`. */
  answered(endpoint: Handshake, status: number): void {
    const key = `${endpoint} ${status}`;
    this.#handshakes.set(key, (this.#handshakes.get(key) ?? 0) + 1);
  }

  /** The ready file appeared and released the waiters. */
  readyFileRelease(): void {
    this.#readyFileReleases += 1;
  }

  /**
   * Envoy was released after a drain that reported `content`. False when that drain was already
   * counted: waiters arriving after a release, or the manager's last look at stop, see its file again.
   */
  drainSeen(content: ReadyContent): boolean {
    const key = content === 'unreadable' ? 'unreadable' : `${content.finishedAt} ${content.elapsedMs}`;
    if (key === this.#lastKey) return false;
    this.#lastKey = key;
    const result = content === 'unreadable' || !isDrainResult(content.result) ? UNKNOWN_RESULT : content.result;
    this.#drains.set(result, (this.#drains.get(result) ?? 0) + 1);
    if (content !== 'unreadable') {
      const finishedAtMs = Date.parse(content.finishedAt);
      this.#last = { elapsedMs: content.elapsedMs, connections: content.connections, finishedAtMs: Number.isNaN(finishedAtMs) ? undefined : finishedAtMs };
    }
    return true;
  }

  /** The exposition, with `waiting` read from the server at the scrape. */
  render(waiting: number): string {
    const lines: string[] = [];
    const family = (name: string, type: 'counter' | 'gauge', help: string, samples: ReadonlyArray<readonly [labels: string, value: number]>): void => {
      lines.push(`# HELP ${PREFIX}_${name} ${help}`, `# TYPE ${PREFIX}_${name} ${type}`);
      for (const [labels, value] of samples) lines.push(`${PREFIX}_${name}${labels} ${formatValue(value)}`);
    };
    family(
      'handshakes_total',
      'counter',
      "Envoy preStop requests answered: endpoint ready (/shutdown/ready) or drain (/shutdown/drain), by HTTP status.",
      [...this.#handshakes].map(([key, count]) => {
        const [endpoint, code] = key.split(' ');
        return [`{endpoint="${endpoint ?? ''}",code="${code ?? ''}"}`, count] as const;
      }),
    );
    family('waiters', 'gauge', '/shutdown/ready requests held open now.', [['', waiting]]);
    family('ready_file_releases_total', 'counter', 'Times the ready file appeared and released the waiting requests.', [['', this.#readyFileReleases]]);
    family('drains_total', 'counter', 'Drains whose end released Envoy, by the result they reported (unknown: the ready file held no report).', [...this.#drains].map(([result, count]) => [`{result="${result}"}`, count] as const));
    const last = this.#last;
    if (last !== undefined) {
      family('last_drain_duration_seconds', 'gauge', 'How long the last drain took.', [['', last.elapsedMs / 1000]]);
      family('last_drain_connections', 'gauge', 'Connections left when the last drain ended (NaN: the count was unknown, which is not zero).', [['', last.connections ?? Number.NaN]]);
      if (last.finishedAtMs !== undefined) family('last_drain_end_timestamp_seconds', 'gauge', 'When the last drain ended, in seconds since the epoch.', [['', last.finishedAtMs / 1000]]);
    }
    return `${lines.join('\n')}\n`;
  }
}

function formatValue(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  return String(value);
}
