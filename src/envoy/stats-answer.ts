// Envoy's stats answers read into StatRecords, a line at a time, in either format: the Prometheus
// endpoint's series straight from their labels, or the plain /stats text's `name: value` lines
// (exact names whatever the configuration). A count is a whole number >= 0 written as Envoy writes
// one: digits, no sign, exponent, point or space. Anything else is not Envoy's answer and fails the
// read: the count is then unknown, never a guess (a stat named twice too: connections.ts). Pure:
// lines in, records out.
import { AdminError } from '../shared/errors.js';
import type { LineReader } from './admin-client.js';
import {
  ADMIN_SCOPE,
  isAdminListener,
  LISTENER_HTTP_SEPARATOR,
  LISTENER_LABEL,
  MANAGER_LABEL,
  matchStatName,
  PER_THREAD_COPY,
  SERIES,
  SKIPPED_SERIES,
  type StatKind,
  type StatRecord,
} from './stat-names.js';

/**
 * The largest stats answer read. Its lines become records as they arrive, never held as text:
 * a read of 1,000 listeners, each with its connection manager, is about 260 KiB; this bound takes
 * some 8,000, and what an answer past it costs the hook stays within the chart's memory limit.
 */
const MAX_STATS_BYTES = 2 * 1024 * 1024;

export type StatsFormat = 'prometheus' | 'text';

/** A stats answer being read: hand it to the admin client, then take its records. */
export interface StatsAnswer extends LineReader {
  /** The records, or why the names in this answer cannot be read (Prometheus only: the text format's names are Envoy's own). */
  finish(): { readonly records: StatRecord[] } | { readonly unreadable: string };
}

export function statsAnswer(format: StatsFormat): StatsAnswer {
  return format === 'prometheus' ? new PrometheusAnswer() : new TextAnswer();
}

/** A count as Envoy writes it; anything else throws. */
export function parseCount(text: string, what: string): number {
  if (!/^(0|[1-9][0-9]*)$/.test(text)) throw malformed(`${what} is ${preview(text)}, not a whole number >= 0 as Envoy writes one`);
  const value = Number(text);
  if (!Number.isSafeInteger(value)) throw malformed(`${what} is ${preview(text)}: above 2^53, too large to read exactly`);
  return value;
}

class Records {
  list: StatRecord[] = [];

  add(kind: StatKind, listener: string, manager: string, value: number): void {
    if (manager !== ADMIN_SCOPE && !isAdminListener(listener)) this.list.push({ kind, listener, manager, value });
  }

  clear(): void {
    this.list = [];
  }
}

/** `name{label="value",…} value`, `#` lines skipped; a label value may hold `}`. */
const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(,|$)/y;

class PrometheusAnswer implements StatsAnswer {
  readonly maxBytes = MAX_STATS_BYTES;
  readonly #records = new Records();
  #unreadable: string | undefined;

  line(line: string): void {
    if (line === '' || line.startsWith('#') || this.#unreadable !== undefined) return;
    const sample = SAMPLE.exec(line);
    if (sample === null) throw notASample(line);
    const series = sample[1] as string;
    const value = parseCount(sample[3] as string, line.slice(0, line.lastIndexOf(' ')));
    if (SKIPPED_SERIES.test(series)) return;
    const labels = parseLabels(sample[2] ?? '', line);
    const shape = SERIES.get(series);
    if (shape === undefined || labels.size !== shape.labels.length || !shape.labels.every((label) => labels.has(label))) {
      this.#unreadable = `/stats/prometheus names ${line.slice(0, line.lastIndexOf(' '))}, which this tool cannot read back (a listener's own stat_prefix, a connection manager's stat_prefix with a dot, or the bootstrap's stats tags)`;
      return;
    }
    this.#records.add(shape.kind, labels.get(LISTENER_LABEL) ?? '', labels.get(MANAGER_LABEL) ?? '', value);
  }

  discard(): void {
    this.#records.clear();
  }

  finish(): { readonly records: StatRecord[] } | { readonly unreadable: string } {
    return this.#unreadable === undefined ? { records: this.#records.list } : { unreadable: this.#unreadable };
  }
}

function parseLabels(text: string, line: string): Map<string, string> {
  const labels = new Map<string, string>();
  LABEL.lastIndex = 0;
  while (LABEL.lastIndex < text.length) {
    const label = LABEL.exec(text);
    if (label === null || labels.has(label[1] as string) || (label[3] === ',' && LABEL.lastIndex === text.length)) throw notASample(line);
    const value = label[2] as string;
    labels.set(label[1] as string, value.includes('\\') ? value.replace(/\\(.)/g, (_, char: string) => (char === 'n' ? '\n' : char)) : value);
  }
  return labels;
}

class TextAnswer implements StatsAnswer {
  readonly maxBytes = MAX_STATS_BYTES;
  readonly #records = new Records();
  /** `<listener>.http.<manager>` names: split once every listener is known. */
  #pairs: Array<{ readonly middle: string; readonly value: number }> = [];

  discard(): void {
    this.#records.clear();
    this.#pairs = [];
  }

  line(line: string): void {
    if (line === '') return;
    const at = line.lastIndexOf(': ');
    if (at === -1) throw malformed(`/stats returned a line that is not \`name: value\`: ${preview(line)}`);
    const name = line.slice(0, at);
    const stat = matchStatName(name);
    if (stat === undefined) return; // a stat no count reads
    const value = parseCount(line.slice(at + 2), name);
    if (stat.kind === 'rq_completed') this.#pairs.push({ middle: stat.captured, value });
    else if (stat.kind !== 'cx_active' && stat.kind !== 'cx_total')
      this.#records.add(stat.kind, '', stat.captured, value); // a manager's, or the server's ('')
    else if (!PER_THREAD_COPY.test(stat.captured)) this.#records.add(stat.kind, stat.captured, '', value);
  }

  /** A pairing name splits where the part before `.http.` is a listener read; one that splits two ways names no listener for certain. */
  finish(): { readonly records: StatRecord[] } {
    const listeners = new Set(this.#records.list.filter((r) => r.listener !== '').map((r) => r.listener));
    for (const { middle, value } of this.#pairs) {
      const splits: Array<[string, string]> = [];
      for (let at = middle.indexOf(LISTENER_HTTP_SEPARATOR); at !== -1; at = middle.indexOf(LISTENER_HTTP_SEPARATOR, at + 1)) {
        const listener = middle.slice(0, at);
        if (listeners.has(listener)) splits.push([listener, middle.slice(at + LISTENER_HTTP_SEPARATOR.length)]);
      }
      if (splits.length === 1) this.#records.add('rq_completed', ...(splits[0] as [string, string]), value);
      else for (const [listener] of splits) this.#records.add('rq_completed', listener, AMBIGUOUS, value);
    }
    return { records: this.#records.list };
  }
}

/** The connection manager of a pairing name that splits at more than one listener: that listener's pairing cannot be told. */
export const AMBIGUOUS = '\n';

function notASample(line: string): AdminError {
  return malformed(`/stats/prometheus returned a line that is not a Prometheus sample: ${preview(line)}`);
}

function malformed(message: string): AdminError {
  return new AdminError('ESM_ADMIN_BAD_RESPONSE', message, false);
}

function preview(text: string): string {
  return JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}…` : text);
}
