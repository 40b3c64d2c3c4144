// Reading the drain's stats out of Envoy's Prometheus endpoint. Envoy answers it from its list of
// distinct stats, where the JSON /stats walks every stats scope, one per filter chain: at 20,000
// chains a JSON read costs Envoy's main thread most of a second, this one about a millisecond.
// Its series carry Envoy's default tags as labels; each is turned back into the stat's own name,
// and a series that cannot be is reported, never guessed at. Pure.
import { AdminError } from '../shared/errors.js';
import { ADMIN_SCOPE, PROMETHEUS_TEMPLATES } from './stat-names.js';
import { checkedStats, type Stat } from './stats.js';

interface Shape {
  /** The labels the series has, no more and no fewer. */
  readonly tags: readonly string[];
  /** A per-thread copy or the admin API's own: every reader of the stats leaves them out. */
  readonly skipped: boolean;
  /** The stat's name from the series' labels. */
  name(labels: ReadonlyMap<string, string>): string;
}

const TAG = /\{([a-z_]+)\}/;

function shapeOf(template: string): [series: string, shape: Shape] {
  // Literal text and tag names alternate: `listener.`, `envoy_listener_address`, `.downstream_cx_active`.
  const parts = template.split(new RegExp(TAG.source, 'g'));
  const tags = parts.filter((_, index) => index % 2 === 1);
  const series = `envoy_${template.replace(/\{[a-z_]+\}\./g, '').replaceAll('.', '_')}`;
  const skipped = template.includes('{envoy_worker_id}') || template.startsWith(`listener.${ADMIN_SCOPE}.`);
  const name = (labels: ReadonlyMap<string, string>): string => {
    let text = '';
    for (let index = 0; index < parts.length; index += 1) text += index % 2 === 1 ? (labels.get(parts[index] as string) as string) : (parts[index] as string);
    return text;
  };
  return [series, { tags, skipped, name }];
}

/** Series name → its stat's shape. */
const SHAPES: ReadonlyMap<string, Shape> = new Map(PROMETHEUS_TEMPLATES.map(shapeOf));

export interface Series {
  readonly name: string;
  readonly labels: ReadonlyMap<string, string>;
  readonly value: number;
}

/** The stats of one answer and how many series it held, or the first series whose stat's name cannot be told. */
export type PrometheusStats = { readonly stats: Stat[]; readonly series: number } | { readonly unreadable: string };

/**
 * The stats a /stats/prometheus answer holds, by their Envoy names, leaving out per-thread copies
 * and the admin API's own (no count reads them). Throws when the answer is not Prometheus text or
 * a value is not a count.
 */
export function parsePrometheusStats(body: string): PrometheusStats {
  const named: Array<{ name: string; value: number }> = [];
  const lines = sampleLines(body);
  for (const line of lines) {
    const sample = matchSample(line);
    const shape = SHAPES.get(sample[1] as string);
    if (shape?.skipped === true) continue; // its labels are never read
    const series = seriesOf(sample, line);
    if (shape === undefined || series.labels.size !== shape.tags.length || !shape.tags.every((tag) => series.labels.has(tag))) return { unreadable: unreadable(series) };
    if (series.labels.get('envoy_http_conn_manager_prefix') === ADMIN_SCOPE) continue;
    named.push({ name: shape.name(series.labels), value: series.value });
  }
  // Every stat named here is one of a count's: each is checked as one.
  return { stats: checkedStats(named, '/stats/prometheus', () => true), series: lines.length };
}

function unreadable(series: Series): string {
  const labels = [...series.labels].map(([key, value]) => `${key}=${JSON.stringify(value)}`).join(',');
  return `/stats/prometheus names ${series.name}{${labels}}, which this tool cannot turn back into an Envoy stat name (a listener's own stat_prefix, a connection manager's stat_prefix with a dot, or the bootstrap's stats tags)`;
}

/** The samples of Prometheus' text format as Envoy writes it: `name{label="value",…} value`, `#` lines skipped. */
export function parsePrometheusText(body: string): Series[] {
  return sampleLines(body).map((line) => seriesOf(matchSample(line), line));
}

function matchSample(line: string): RegExpExecArray {
  const sample = SAMPLE.exec(line);
  if (sample === null) throw notASample(line);
  return sample;
}

function seriesOf(sample: RegExpExecArray, line: string): Series {
  return { name: sample[1] as string, labels: parseLabels(sample[2] ?? '', line), value: Number(sample[3]) };
}

function sampleLines(body: string): string[] {
  return body.split('\n').filter((line) => line !== '' && !line.startsWith('#'));
}

/** A name, its labels' text between braces (a value may hold `}`), one space and a value. */
const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(,|$)/y;

function parseLabels(text: string, line: string): Map<string, string> {
  const labels = new Map<string, string>();
  LABEL.lastIndex = 0;
  while (LABEL.lastIndex < text.length) {
    const label = LABEL.exec(text);
    if (label === null || labels.has(label[1] as string) || (label[3] === ',' && LABEL.lastIndex === text.length)) throw notASample(line);
    const value = label[2] as string;
    labels.set(label[1] as string, value.includes('\\') ? unescape(value) : value);
  }
  return labels;
}

function unescape(value: string): string {
  return value.replace(/\\(.)/g, (_, char: string) => (char === 'n' ? '\n' : char));
}

function notASample(line: string): AdminError {
  const shown = line.length > 80 ? `${line.slice(0, 80)}…` : line;
  return new AdminError('ESM_ADMIN_BAD_RESPONSE', `/stats/prometheus returned a line that is not a Prometheus sample: ${JSON.stringify(shown)}`, false);
}
