// Summaries and formatting shared by every scenario: medians and spreads of repeated runs, ratios
// against a baseline measured in the same run, and Markdown tables.

export interface Summary {
  readonly n: number;
  readonly median: number;
  readonly p10: number;
  readonly p90: number;
  readonly min: number;
  readonly max: number;
}

/** Linear interpolation between closest ranks (the common "type 7" quantile). */
function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const position = (sorted.length - 1) * q;
  const below = Math.floor(position);
  const lower = sorted[below] ?? Number.NaN;
  const upper = sorted[Math.min(below + 1, sorted.length - 1)] ?? lower;
  return lower + (upper - lower) * (position - below);
}

export function summarize(values: readonly number[]): Summary {
  const sorted = [...values].sort((a, b) => a - b);
  return {
    n: sorted.length,
    median: quantile(sorted, 0.5),
    p10: quantile(sorted, 0.1),
    p90: quantile(sorted, 0.9),
    min: sorted[0] ?? Number.NaN,
    max: sorted.at(-1) ?? Number.NaN,
  };
}

/** Milliseconds for people: `0.42 ms`, `31 ms`, `2.41 s`. */
export function formatMs(value: number): string {
  if (!Number.isFinite(value)) return '—';
  if (Math.abs(value) >= 1_000) return `${(value / 1_000).toFixed(2)} s`;
  if (Math.abs(value) >= 10) return `${value.toFixed(0)} ms`;
  return `${value.toFixed(Math.abs(value) >= 1 ? 1 : 2)} ms`;
}

/** Kibibytes as MiB with one decimal. */
export function formatMiB(kib: number): string {
  return Number.isFinite(kib) ? `${(kib / 1024).toFixed(1)} MiB` : '—';
}

/** `median (p10–p90)` in the given unit formatter. */
export function medianAndSpread(summary: Summary, format: (value: number) => string, spread: 'p10-p90' | 'min-max' = 'p10-p90'): string {
  const [low, high] = spread === 'p10-p90' ? [summary.p10, summary.p90] : [summary.min, summary.max];
  return `${format(summary.median)} (${format(low)}–${format(high)})`;
}

/** `a / b` as `0.12×`; two significant decimals below 10, none above 100. */
export function ratio(value: number, baseline: number): string {
  if (!Number.isFinite(value) || !Number.isFinite(baseline) || baseline === 0) return '—';
  const r = value / baseline;
  return `${r >= 100 ? r.toFixed(0) : r >= 10 ? r.toFixed(1) : r >= 0.1 ? r.toFixed(2) : r.toFixed(3)}×`;
}

export function table(headers: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const line = (cells: readonly string[]): string => `| ${cells.join(' | ')} |`;
  return [line(headers), line(headers.map(() => '---')), ...rows.map(line)].join('\n');
}

/** Evenly spread phases in [0, period), in shuffled order: fewer runs cover a whole period than random draws would. */
export function stratifiedOffsets(count: number, periodMs: number): number[] {
  const offsets = Array.from({ length: count }, (_, i) => ((i + 0.5) / count) * periodMs);
  for (let i = offsets.length - 1; i > 0; i -= 1) {
    const j = Math.floor(Math.random() * (i + 1));
    [offsets[i], offsets[j]] = [offsets[j] as number, offsets[i] as number];
  }
  return offsets;
}
