// Renders /stats as text or JSON. Order: text readouts, counters, gauges, histograms, each sorted
// by name (the order the reference specifies); histograms in Envoy's quantile shapes.
import type { StatsParams } from './stats-params.js';
import type { Counter, Gauge, Histogram, StatSnapshot, TextReadout } from './stats-store.js';

/** The quantiles Envoy reports for every histogram, in percent. */
export const SUPPORTED_QUANTILES = [0, 25, 50, 75, 90, 95, 99, 99.5, 99.9, 100] as const;

export interface SelectedStats {
  textReadouts: Array<[string, TextReadout]>;
  counters: Array<[string, Counter]>;
  gauges: Array<[string, Gauge]>;
  histograms: Array<[string, Histogram]>;
}

/** Applies type, usedonly and filter (matched anywhere in the name unless anchored). */
export function selectStats(snapshot: StatSnapshot, params: StatsParams): SelectedStats {
  const keep = <T extends { used: boolean }>(wanted: boolean, stats: Array<[string, T]>): Array<[string, T]> =>
    wanted ? stats.filter(([name, stat]) => (!params.usedOnly || stat.used) && (params.filter?.test(name) ?? true)) : [];
  const all = params.type === 'All';
  return {
    textReadouts: keep(all || params.type === 'TextReadouts', snapshot.textReadouts),
    counters: keep(all || params.type === 'Counters', snapshot.counters),
    gauges: keep(all || params.type === 'Gauges', snapshot.gauges),
    histograms: keep(all || params.type === 'Histograms', snapshot.histograms),
  };
}

export function renderText(stats: SelectedStats): string {
  const lines: string[] = [];
  for (const [name, readout] of stats.textReadouts) lines.push(`${name}: ${JSON.stringify(readout.value)}`);
  for (const [name, counter] of stats.counters) lines.push(`${name}: ${counter.value}`);
  for (const [name, gauge] of stats.gauges) lines.push(`${name}: ${gauge.value}`);
  for (const [name, histogram] of stats.histograms) lines.push(`${name}: ${textQuantiles(histogram)}`);
  return lines.map((line) => `${line}\n`).join('');
}

/** Compact JSON, integers for counters and gauges, histograms as one trailing element. */
export function renderJson(stats: SelectedStats): string {
  const entries: unknown[] = [
    ...stats.textReadouts.map(([name, readout]) => ({ name, value: readout.value })),
    ...stats.counters.map(([name, counter]) => ({ name, value: counter.value })),
    ...stats.gauges.map(([name, gauge]) => ({ name, value: gauge.value })),
  ];
  if (stats.histograms.length > 0) {
    entries.push({
      histograms: {
        supported_quantiles: SUPPORTED_QUANTILES,
        computed_quantiles: stats.histograms.map(([name, histogram]) => ({
          name,
          values: SUPPORTED_QUANTILES.map((q) => ({
            interval: quantile(histogram.interval, q) ?? null,
            cumulative: quantile(histogram.cumulative, q) ?? null,
          })),
        })),
      },
    });
  }
  return JSON.stringify({ stats: entries });
}

function textQuantiles(histogram: Histogram): string {
  if (histogram.cumulative.length === 0) return 'No recorded values';
  const show = (value: number | undefined): string => (value === undefined ? 'nan' : String(value));
  return SUPPORTED_QUANTILES.map(
    (q) => `P${q}(${show(quantile(histogram.interval, q))},${show(quantile(histogram.cumulative, q))})`,
  ).join(' ');
}

/** A linear-interpolated quantile: Envoy approximates with circllhist, exact is close enough here. */
export function quantile(values: readonly number[], percent: number): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = (percent / 100) * (sorted.length - 1);
  const low = sorted[Math.floor(rank)] ?? 0;
  const high = sorted[Math.ceil(rank)] ?? low;
  return Math.round((low + (high - low) * (rank - Math.floor(rank))) * 1000) / 1000;
}
