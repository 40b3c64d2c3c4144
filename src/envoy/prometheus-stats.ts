// Reading the drain's stats out of Envoy's Prometheus endpoint. Envoy answers it from its list of
// distinct stats, where the JSON /stats walks every stats scope, one per filter chain: at 20,000
// chains a JSON read costs Envoy's main thread most of a second, this one about a millisecond.
// Its series carry Envoy's default tags as labels; each is turned back into the stat's own name,
// and a series that cannot be is reported, never guessed at. Pure.
import { AdminError } from '../shared/errors.js';
import { ADMIN_SCOPE, PROMETHEUS_TEMPLATES } from './stat-names.js';
import { checkedStats, type Stat } from './stats.js';

interface Shape {
  readonly template: string;
  /** The labels the series has, no more and no fewer. */
  readonly tags: readonly string[];
  /** A per-thread copy or the admin API's own: every reader of the stats leaves them out. */
  readonly skipped: boolean;
}

const TAG = /\{([a-z_]+)\}/g;

/** Series name → its stat's template. */
const SHAPES: ReadonlyMap<string, Shape> = new Map(
  PROMETHEUS_TEMPLATES.map((template) => {
    const series = `envoy_${template.replace(/\{[a-z_]+\}\./g, '').replaceAll('.', '_')}`;
    const tags = [...template.matchAll(TAG)].map((match) => match[1] as string).sort();
    const skipped = template.includes('{envoy_worker_id}') || template.startsWith(`listener.${ADMIN_SCOPE}.`);
    return [series, { template, tags, skipped }];
  }),
);

export interface Series {
  readonly name: string;
  readonly labels: ReadonlyMap<string, string>;
  readonly value: number;
}

/** The stats of one answer, or the first series whose stat's name cannot be told. */
export type PrometheusStats = { readonly stats: Stat[] } | { readonly unreadable: string };

/**
 * The stats a /stats/prometheus answer holds, by their Envoy names, leaving out per-thread copies
 * and the admin API's own (no count reads them). Throws when the answer is not Prometheus text or
 * a value is not a count.
 */
export function parsePrometheusStats(body: string): PrometheusStats {
  const named: Array<{ name: string; value: number }> = [];
  for (const series of parsePrometheusText(body)) {
    const shape = SHAPES.get(series.name);
    const labels = [...series.labels.keys()].sort();
    if (shape === undefined || labels.join() !== shape.tags.join()) return { unreadable: unreadable(series) };
    if (shape.skipped || series.labels.get('envoy_http_conn_manager_prefix') === ADMIN_SCOPE) continue;
    named.push({ name: shape.template.replace(TAG, (_, tag: string) => series.labels.get(tag) as string), value: series.value });
  }
  return { stats: checkedStats(named, '/stats/prometheus') };
}

function unreadable(series: Series): string {
  const labels = [...series.labels].map(([key, value]) => `${key}=${JSON.stringify(value)}`).join(',');
  return `/stats/prometheus names ${series.name}{${labels}}, which this tool cannot turn back into an Envoy stat name (a listener's own stat_prefix, a connection manager's stat_prefix with a dot, or the bootstrap's stats tags)`;
}

/** The samples of Prometheus' text format as Envoy writes it: `name{label="value",…} value`, `#` lines skipped. */
export function parsePrometheusText(body: string): Series[] {
  const series: Series[] = [];
  for (const line of body.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    series.push(parseSample(line));
  }
  return series;
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*/;
const LABEL = /^([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/;

function parseSample(line: string): Series {
  const name = NAME.exec(line)?.[0];
  if (name === undefined) throw notASample(line);
  let rest = line.slice(name.length);
  const labels = new Map<string, string>();
  if (rest.startsWith('{')) {
    rest = rest.slice(1);
    while (!rest.startsWith('}')) {
      const label = LABEL.exec(rest);
      if (label === null || labels.has(label[1] as string)) throw notASample(line);
      labels.set(label[1] as string, unescape(label[2] as string));
      rest = rest.slice(label[0].length);
      if (rest.startsWith(',')) rest = rest.slice(1);
      else if (!rest.startsWith('}')) throw notASample(line);
    }
    rest = rest.slice(1);
  }
  const value = /^ (\S+)$/.exec(rest)?.[1];
  if (value === undefined) throw notASample(line);
  return { name, labels, value: Number(value) };
}

function unescape(value: string): string {
  return value.replace(/\\(.)/g, (_, char: string) => (char === 'n' ? '\n' : char));
}

function notASample(line: string): AdminError {
  const shown = line.length > 80 ? `${line.slice(0, 80)}…` : line;
  return new AdminError('ESM_ADMIN_BAD_RESPONSE', `/stats/prometheus returned a line that is not a Prometheus sample: ${JSON.stringify(shown)}`, false);
}
