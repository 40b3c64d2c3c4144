// How a drain reads Envoy's stats so that the cost to Envoy stays small however large its
// configuration. Through the Prometheus endpoint (prometheus-stats.ts), in two kinds of read:
// - a full read names every stat the filter matches, zeros included: the set of listeners and
//   connection managers, and the stats that pair them;
// - after it, `usedonly` reads name only the stats that ever moved, so their size follows the
//   traffic, not the configuration. A stat the full read saw that a usedonly read leaves out never
//   moved: it is still 0.
// The listener manager's update counters are in every read: when they move, or a usedonly read
// names a stat the full read did not have, the listeners may have changed, and the read is done
// again in full; without them, every read is. When the Prometheus names cannot be turned back
// into Envoy's, the JSON /stats, exact whatever the names, is read instead for the rest of the run.
import type { EnvoyAdmin } from './admin-client.js';
import { parsePrometheusStats, type PrometheusStats } from './prometheus-stats.js';
import { isListenerUpdateStat, statsFilter, type StatsWanted } from './stat-names.js';
import { parseStatsJson, type Stat } from './stats.js';

/**
 * The largest answer read. A full read holds a few lines per listener and per worker thread: about
 * 1 MB at 1,000 listeners with two workers.
 */
export const MAX_STATS_BYTES = 8 * 1024 * 1024;

/**
 * What a read costs Envoy's main thread for each series the full read named, in microseconds,
 * measured on Envoy 1.40 (bench/RESULTS.md, large gateways): a full read has Envoy name every stat
 * it holds, some 30 for each series named in the peers' listener shapes (70-74 ms for 6,000 series
 * at 1,000 listeners, with one worker or two: 12 µs a series); a usedonly read only looks at each
 * stat (4-6 ms there). Both are set well above what was measured, since the drain's pacing must
 * never take a read for less than it costs. Unlike a read's wall time, this does not grow when the
 * node is busy, so a small configuration's reads are never spaced for the node's sake.
 */
const FULL_READ_US_PER_SERIES = 20;
const USED_ONLY_READ_US_PER_SERIES = 1.5;

export interface StatsRead {
  readonly stats: readonly Stat[];
  /** The stats came from a full read (or the JSON /stats): their listeners and pairing are to be read anew. */
  readonly full: boolean;
  /** Set once the JSON /stats is read instead of the Prometheus endpoint: why. */
  readonly jsonBecause?: string;
  /** Through the Prometheus endpoint: what the read cost Envoy's main thread, at most (FULL_READ_US_PER_SERIES). */
  readonly envoyCostMs?: number;
}

export interface StatsReader {
  read(signal?: AbortSignal, timeoutMs?: number): Promise<StatsRead>;
}

/** The GETs of the three kinds of read; filters sent unencoded, as Envoy's own docs write them (Envoy decodes either form). */
export function statsReadPaths(wanted: StatsWanted): { readonly full: string; readonly usedOnly: string; readonly json: string } {
  const prometheusFilter = statsFilter({ ...wanted, listenerUpdates: true });
  return {
    full: `/stats/prometheus?filter=${prometheusFilter}`,
    usedOnly: `/stats/prometheus?usedonly&filter=${prometheusFilter}`,
    json: `/stats?filter=${statsFilter(wanted)}&format=json`,
  };
}

export function createStatsReader(admin: EnvoyAdmin, wanted: StatsWanted): StatsReader {
  return new PrometheusFirst(admin, statsReadPaths(wanted));
}

interface Baseline {
  /** By name. */
  readonly stats: ReadonlyMap<string, Stat>;
  readonly series: number;
}

class PrometheusFirst implements StatsReader {
  readonly #admin: EnvoyAdmin;
  readonly #paths: ReturnType<typeof statsReadPaths>;
  /** The last full read's stats by name, and how many series it named; undefined: the next read is a full one. */
  #baseline: Baseline | undefined;
  /** Set once the Prometheus names could not be read back: the JSON /stats from then on. */
  #jsonBecause: string | undefined;
  /** The last usedonly read: the stats it named, and what it read as. */
  #last: { readonly used: string; readonly read: StatsRead } | undefined;

  constructor(admin: EnvoyAdmin, paths: ReturnType<typeof statsReadPaths>) {
    this.#admin = admin;
    this.#paths = paths;
  }

  async read(signal?: AbortSignal, timeoutMs?: number): Promise<StatsRead> {
    const get = (path: string): Promise<string> => this.#admin.get(path, signal, timeoutMs, MAX_STATS_BYTES);
    if (this.#jsonBecause === undefined && this.#baseline !== undefined) {
      const read = this.#usedOnly(await get(this.#paths.usedOnly), this.#baseline);
      if (read !== undefined) return read;
    }
    if (this.#jsonBecause === undefined) {
      const read = this.#full(await get(this.#paths.full));
      if (read !== undefined) return read;
    }
    return { stats: parseStatsJson(await get(this.#paths.json)), full: true, ...(this.#jsonBecause === undefined ? {} : { jsonBecause: this.#jsonBecause }) };
  }

  /**
   * Undefined when a full read must follow, or the names cannot be read back. The same stats with
   * the same values as the last time (the admin API's own left out: they move with every call)
   * are the same read, the very object, without going through the full read's stats again.
   */
  #usedOnly(body: string, baseline: Baseline): StatsRead | undefined {
    const used = this.#readable(parsePrometheusStats(body))?.stats;
    if (used === undefined) return undefined;
    const key = used.map(({ name, value }) => `${name} ${value}`).join('\n');
    if (this.#last?.used === key) return this.#last.read;
    const stats = withUnused(baseline.stats, used);
    const read = stats === undefined ? undefined : { stats, full: false, envoyCostMs: (baseline.series * USED_ONLY_READ_US_PER_SERIES) / 1_000 };
    this.#last = read === undefined ? undefined : { used: key, read };
    return read;
  }

  /** Undefined when the names cannot be read back. */
  #full(body: string): StatsRead | undefined {
    const answer = this.#readable(parsePrometheusStats(body));
    if (answer === undefined) return undefined;
    const { stats: all, series } = answer;
    // Without the update counters (a stats matcher dropped them) a changed listener could go
    // unseen: every read is then a full one.
    this.#baseline = all.some(({ name }) => isListenerUpdateStat(name)) ? { stats: new Map(all.map((stat) => [stat.name, stat])), series } : undefined;
    this.#last = undefined;
    return { stats: all, full: true, envoyCostMs: (series * FULL_READ_US_PER_SERIES) / 1_000 };
  }

  /** The Prometheus stats, or undefined and the JSON ones from now on when their names cannot be read back. */
  #readable(answer: PrometheusStats): Exclude<PrometheusStats, { readonly unreadable: string }> | undefined {
    if ('stats' in answer) return answer;
    this.#jsonBecause = answer.unreadable;
    return undefined;
  }
}

/**
 * A usedonly read completed with the stats of the full read it left out, at 0; undefined when the
 * two cannot be the same listeners: the usedonly read names a stat the full read did not have, or
 * leaves out one that was not 0 then (a stat that moved is never left out while it exists), or the
 * listener manager's update counters moved. A stat with the value it had in `baseline` is that
 * very object (a read of a thousand listeners makes no new ones for the stats that stood still). Pure.
 */
export function withUnused(baseline: ReadonlyMap<string, Stat>, used: readonly Stat[]): Stat[] | undefined {
  const values = new Map<string, number>();
  for (const { name, value } of used) {
    if (!baseline.has(name)) return undefined;
    values.set(name, value);
  }
  const stats: Stat[] = [];
  for (const [name, before] of baseline) {
    const value = values.get(name) ?? 0;
    if (value === before.value) {
      stats.push(before);
      continue;
    }
    if (!values.has(name) || isListenerUpdateStat(name)) return undefined;
    stats.push({ name, value });
  }
  return stats;
}
