// Renders /stats/prometheus: Envoy's tag extraction turns parts of a stat name into labels
// (`http.ingress.downstream_cx_active` -> `envoy_http_downstream_cx_active{envoy_http_conn_manager_prefix="ingress"}`).
import type { SelectedStats } from './stats-render.js';
import type { Histogram } from './stats-store.js';

/** Envoy's default histogram bucket bounds, in the histogram's unit (ms for durations). */
const BUCKETS = [0.5, 1, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000, 60000, 300000, 600000, 1800000, 3600000];

interface Metric {
  name: string;
  labels: string;
  lines: (labels: string, name: string) => string[];
}

export function renderPrometheus(stats: SelectedStats, withTextReadouts: boolean): string {
  const groups = new Map<string, { type: string; metrics: Metric[] }>();
  const add = (statName: string, type: string, lines: Metric['lines']): void => {
    const { name, labels } = extractTags(statName);
    const group = groups.get(name) ?? { type, metrics: [] };
    group.metrics.push({ name, labels, lines });
    groups.set(name, group);
  };

  if (withTextReadouts) {
    for (const [statName, readout] of stats.textReadouts) {
      add(statName, 'gauge', (labels, name) => [`${name}${withLabel(labels, 'text_value', readout.value)} 0`]);
    }
  }
  for (const [statName, counter] of stats.counters) {
    add(statName, 'counter', (labels, name) => [`${name}{${labels}} ${counter.value}`]);
  }
  for (const [statName, gauge] of stats.gauges) {
    add(statName, 'gauge', (labels, name) => [`${name}{${labels}} ${gauge.value}`]);
  }
  for (const [statName, histogram] of stats.histograms) {
    add(statName, 'histogram', (labels, name) => histogramLines(name, labels, histogram));
  }

  const out: string[] = [];
  for (const name of [...groups.keys()].sort()) {
    const group = groups.get(name);
    if (group === undefined) continue;
    out.push(`# TYPE ${name} ${group.type}`);
    for (const metric of group.metrics) out.push(...metric.lines(metric.labels, metric.name));
  }
  return out.map((line) => `${line}\n`).join('');
}

function histogramLines(name: string, labels: string, histogram: Histogram): string[] {
  const values = histogram.cumulative;
  const lines = BUCKETS.map(
    (bound) => `${name}_bucket${withLabel(labels, 'le', String(bound))} ${values.filter((v) => v <= bound).length}`,
  );
  lines.push(`${name}_bucket${withLabel(labels, 'le', '+Inf')} ${values.length}`);
  lines.push(`${name}_sum{${labels}} ${values.reduce((sum, v) => sum + v, 0)}`);
  lines.push(`${name}_count{${labels}} ${values.length}`);
  return lines;
}

function withLabel(labels: string, key: string, value: string): string {
  const label = `${key}="${escapeLabel(value)}"`;
  return `{${labels === '' ? label : `${labels},${label}`}}`;
}

/** A listener named after its address (`0.0.0.0_10000`, `[__1]_80`) rather than a stat_prefix. */
const ADDRESS_NAME = /^(?:[\d._]+|\[[\w]*\]_\d+)$/;

/** A small, fixed set of Envoy's default tag extractors: the ones the stand-in's stats can hit. */
export function extractTags(statName: string): { name: string; labels: string } {
  const labels: string[] = [];
  let parts = statName.split('.');
  if (parts[0] === 'http' && parts.length > 2) {
    labels.push(`envoy_http_conn_manager_prefix="${escapeLabel(parts[1] ?? '')}"`);
    parts = [parts[0], ...parts.slice(2)];
  } else if (parts[0] === 'listener' && parts.length > 2) {
    if (ADDRESS_NAME.test(parts[1] ?? '')) {
      labels.push(`envoy_listener_address="${escapeLabel(parts[1] ?? '')}"`);
      parts = [parts[0], ...parts.slice(2)];
    }
    const worker = parts.findIndex((part) => /^worker_\d+$/.test(part));
    if (worker > 0) {
      labels.push(`envoy_worker_id="${(parts[worker] ?? '').slice('worker_'.length)}"`);
      parts.splice(worker, 1);
    }
  }
  return { name: `envoy_${parts.join('_').replace(/[^a-zA-Z0-9_:]/g, '_')}`, labels: labels.join(',') };
}

function escapeLabel(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
}
