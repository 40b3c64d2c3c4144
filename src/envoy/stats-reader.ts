// Which stats read a drain makes, and what each costs Envoy, measured on it. Envoy answers admin
// calls on its main thread, and how much work a read is depends on the configuration's shape, not
// on what the read returns: every stat Envoy holds is looked at (at 2,000 clusters, 214,000 of
// them), while the Prometheus endpoint and the text /stats walk them differently (at 20,000 filter
// chains the text one costs Envoy hundreds of times more; at thousands of clusters, less). So:
// - reads are `usedonly`: Envoy skips every stat that never moved before matching its name, which
//   is most of the cost; a stat left out is 0 (connections.ts). A full read is made only when a
//   usedonly one cannot tell (connections.ts fullReadWanted);
// - each read's price is the least time any read of its kind took here: Envoy's work for it at
//   most, since waiting only adds;
// - the Prometheus endpoint is read first; once two reads of it were dear enough to matter, the
//   text one is tried once, and the cheaper kept. A Prometheus answer whose names cannot be read back
//   (a listener's own stat_prefix, say) sends every read to the text /stats.
import { performance } from 'node:perf_hooks';
import type { EnvoyAdmin } from './admin-client.js';
import { type StatRecord, type StatsWanted, statsFilter } from './stat-names.js';
import { type StatsFormat, statsAnswer } from './stats-answer.js';

export type ReadKind = 'used' | 'full';

/** Below this price a read costs Envoy too little to try another format for it. */
export const TRY_TEXT_ABOVE_MS = 5;

export interface StatsRead {
  readonly records: readonly StatRecord[];
  readonly kind: ReadKind;
  /** The GET that was sent, for the log. */
  readonly path: string;
  /** What this read costs Envoy: the least any read of its format and kind took. */
  readonly priceMs: number;
  /** Set once the Prometheus names could not be read back: why. */
  readonly textBecause?: string;
}

/** The GET of one kind of read in one format; filters sent unencoded, as Envoy's own docs write them (Envoy decodes either form). */
export function statsPath(format: StatsFormat, kind: ReadKind, wanted: StatsWanted): string {
  const query = `${kind === 'used' ? 'usedonly&' : ''}filter=${statsFilter(wanted)}`;
  return format === 'prometheus' ? `/stats/prometheus?${query}` : `/stats?${query}`;
}

/**
 * The format the next read uses, from the prices measured so far and how many reads each price
 * rests on. Pure. The text one is tried only once two Prometheus reads were dear: a process's first
 * read also pays for its connection and its own warm-up, and at 20,000 filter chains a text read
 * costs Envoy hundreds of times a Prometheus one.
 */
export function formatToUse(
  prices: ReadonlyMap<string, { readonly ms: number; readonly reads: number }>,
  kind: ReadKind,
  prometheusUnreadable: boolean,
): StatsFormat {
  if (prometheusUnreadable) return 'text';
  const prometheus = prices.get(`prometheus ${kind}`);
  const text = prices.get(`text ${kind}`)?.ms;
  if (prometheus === undefined || prometheus.reads < 2) return 'prometheus';
  if (text === undefined) return prometheus.ms >= TRY_TEXT_ABOVE_MS ? 'text' : 'prometheus';
  return text < prometheus.ms ? 'text' : 'prometheus';
}

export class StatsReader {
  readonly #admin: EnvoyAdmin;
  readonly #wanted: StatsWanted;
  /** `<format> <kind>` → the least time a read of it took, in ms, and how many reads it rests on. */
  readonly #prices = new Map<string, { ms: number; reads: number }>();
  #textBecause: string | undefined;

  constructor(admin: EnvoyAdmin, wanted: StatsWanted) {
    this.#admin = admin;
    this.#wanted = wanted;
  }

  /** What a read of `kind` is expected to cost Envoy; 0 before any was made. */
  priceOf(kind: ReadKind): number {
    return this.#prices.get(`${formatToUse(this.#prices, kind, this.#textBecause !== undefined)} ${kind}`)?.ms ?? 0;
  }

  async read(kind: ReadKind, signal?: AbortSignal, timeoutMs?: number): Promise<StatsRead> {
    for (;;) {
      const format = formatToUse(this.#prices, kind, this.#textBecause !== undefined);
      const path = statsPath(format, kind, this.#wanted);
      const answer = statsAnswer(format);
      const startedAt = performance.now();
      await this.#admin.getLines(path, answer, signal, timeoutMs);
      const key = `${format} ${kind}`;
      const before = this.#prices.get(key);
      const priceMs = Math.min(performance.now() - startedAt, before?.ms ?? Number.POSITIVE_INFINITY);
      this.#prices.set(key, { ms: priceMs, reads: (before?.reads ?? 0) + 1 });
      const read = answer.finish();
      if ('records' in read)
        return { records: read.records, kind, path, priceMs, ...(this.#textBecause === undefined ? {} : { textBecause: this.#textBecause }) };
      this.#textBecause = read.unreadable;
    }
  }
}
