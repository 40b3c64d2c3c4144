// The stand-in's stats: counters, gauges, text readouts and histograms, each remembering whether it
// was ever written (Envoy's "used" flag, which /stats?usedonly filters on).

export class Counter {
  value = 0;
  used = false;
  inc(by = 1): void {
    this.value += by;
    this.used = true;
  }
}

export class Gauge {
  value = 0;
  used = false;
  inc(): void {
    this.set(this.value + 1);
  }
  dec(): void {
    this.set(this.value - 1);
  }
  set(value: number): void {
    this.value = value;
    this.used = true;
  }
}

export class TextReadout {
  value = '';
  used = false;
  set(value: string): void {
    this.value = value;
    this.used = true;
  }
}

/**
 * Like Envoy's, a histogram's samples only become visible when stats are flushed: "interval" holds
 * the samples of the last flush period, "cumulative" everything up to the last flush.
 */
export class Histogram {
  used = false;
  private pending: number[] = [];
  interval: number[] = [];
  cumulative: number[] = [];
  record(value: number): void {
    this.pending.push(value);
    this.used = true;
  }
  merge(): void {
    this.interval = this.pending;
    this.cumulative = this.cumulative.concat(this.pending);
    this.pending = [];
  }
}

export interface StatSnapshot {
  textReadouts: Array<[string, TextReadout]>;
  counters: Array<[string, Counter]>;
  gauges: Array<[string, Gauge]>;
  histograms: Array<[string, Histogram]>;
}

export class StatsStore {
  private readonly counters = new Map<string, Counter>();
  private readonly gauges = new Map<string, Gauge>();
  private readonly textReadouts = new Map<string, TextReadout>();
  private readonly histograms = new Map<string, Histogram>();

  counter(name: string): Counter {
    return getOrCreate(this.counters, name, () => new Counter());
  }
  gauge(name: string): Gauge {
    return getOrCreate(this.gauges, name, () => new Gauge());
  }
  textReadout(name: string): TextReadout {
    return getOrCreate(this.textReadouts, name, () => new TextReadout());
  }
  histogram(name: string): Histogram {
    return getOrCreate(this.histograms, name, () => new Histogram());
  }

  /** The current value of a counter or gauge; undefined for unknown names and non-numeric stats. */
  value(name: string): number | undefined {
    return this.counters.get(name)?.value ?? this.gauges.get(name)?.value;
  }

  mergeHistograms(): void {
    for (const histogram of this.histograms.values()) histogram.merge();
  }

  /** Every stat, each kind sorted by name, as Envoy renders them. */
  snapshot(): StatSnapshot {
    return {
      textReadouts: sorted(this.textReadouts),
      counters: sorted(this.counters),
      gauges: sorted(this.gauges),
      histograms: sorted(this.histograms),
    };
  }
}

function getOrCreate<T>(map: Map<string, T>, name: string, create: () => T): T {
  let stat = map.get(name);
  if (stat === undefined) {
    stat = create();
    map.set(name, stat);
  }
  return stat;
}

function sorted<T>(map: Map<string, T>): Array<[string, T]> {
  return [...map.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}
