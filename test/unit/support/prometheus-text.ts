// Envoy's /stats/prometheus answer for a list of stats, for fake admin APIs: each name turned into
// a series by Envoy's default tags as real Envoy 1.40 applies them, written independently of the
// parser. A listener's address tag takes an address-like scope (`0.0.0.0_80`, `[__1]_0`) whole and
// any other scope's first segment only, and a connection manager's prefix tag its first segment: so
// a dotted stat_prefix leaves the rest of it in the series name, as Envoy does.
export interface FakeStat {
  readonly name: string;
  readonly value: number;
  /** Whether the stat ever moved (what `usedonly` keeps); default: its value is not 0. */
  readonly used?: boolean;
}

/** The stats an answer names: all, or under `usedonly` only the ones that moved; then those the filter lets through. */
export function answered(stats: readonly FakeStat[], usedOnly: boolean, filter: RegExp | undefined): FakeStat[] {
  return stats.filter((stat) => (!usedOnly || (stat.used ?? stat.value !== 0)) && (filter === undefined || filter.test(stat.name)));
}

const ADDRESS = /^listener\.((?:[_.0-9]*|[_[\]a-fA-F0-9]*)_[0-9]+|[^.]+)\./;
const WORKER = /^listener\.worker_([0-9]+)\./;
const HTTP_PREFIX = /^(http|listener\.(?:.*?\.)?http)\.([^.]+)\./;

/** `name` as a Prometheus series with its labels. */
export function seriesOf(name: string): string {
  const labels: string[] = [];
  let rest = name;
  let listener: string | undefined;
  const address = ADDRESS.exec(rest);
  if (address !== null && address[1] !== 'admin') {
    listener = address[1];
    rest = `listener.${rest.slice(address[0].length)}`;
  }
  const worker = WORKER.exec(rest);
  if (worker !== null) {
    labels.push(`envoy_worker_id="${worker[1]}"`);
    rest = `listener.worker.${rest.slice(worker[0].length)}`;
  }
  const prefix = HTTP_PREFIX.exec(rest);
  if (prefix !== null) {
    labels.push(`envoy_http_conn_manager_prefix="${prefix[2]}"`);
    rest = `${prefix[1]}.${rest.slice(prefix[0].length)}`;
  }
  if (listener !== undefined) labels.push(`envoy_listener_address="${listener}"`);
  return `envoy_${rest.replace(/[^a-zA-Z0-9_]/g, '_')}{${labels.join(',')}}`;
}

export function prometheusText(stats: readonly FakeStat[], usedOnly = false, filter?: RegExp): string {
  return answered(stats, usedOnly, filter)
    .map((stat) => `${seriesOf(stat.name)} ${stat.value}\n`)
    .join('');
}
