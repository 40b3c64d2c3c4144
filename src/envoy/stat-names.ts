// Every Envoy stat this tool reads, each spelled once: the /stats filter sent to Envoy, the
// Prometheus series its answer names and the patterns that read Envoy's own names are all built
// from STATS below, so they cannot disagree.

/** What a stat says, whichever format named it. */
export type StatKind =
  | 'cx_active' // a listener's live connections (gauge)
  | 'cx_total' // connections a listener ever accepted
  | 'http_cx_active' // an HTTP connection manager's live connections (gauge)
  | 'rq_active' // its requests in flight: HTTP/1.1 requests and HTTP/2 streams (gauge)
  | 'rq_total' // requests it ever received: its growth means requests still arrive
  | 'rq_completed' // its requests completed on one listener: Envoy makes it for each listener it serves, so it pairs them
  | 'total_connections' // server.total_connections, recomputed only at a stats flush
  | 'uptime' // server.uptime, moved only at a stats flush
  | 'listener_update'; // the listener manager's counters of listeners added, modified, removed

/** One stat, read: the listener and connection manager it belongs to ('' where it has none). */
export interface StatRecord {
  readonly kind: StatKind;
  readonly listener: string;
  readonly manager: string;
  readonly value: number;
}

/**
 * The admin API's own stats scope, as a listener (`listener.admin.*`) and as a connection manager
 * (`http.admin.*`): our polling connection and request live there, so it is never counted.
 */
export const ADMIN_SCOPE = 'admin';
export const TOTAL_CONNECTIONS_STAT = 'server.total_connections';

/**
 * Each stat as Envoy names it, `{l}` standing for a listener's stats name (it may hold dots:
 * `0.0.0.0_10000`) and `{m}` for a connection manager's stat prefix; and the Prometheus series
 * Envoy's default tags make of it (`{l}` becomes the label envoy_listener_address, `{m}`
 * envoy_http_conn_manager_prefix).
 */
const STATS: ReadonlyArray<{ readonly kind: StatKind; readonly name: string; readonly series: string }> = [
  { kind: 'cx_active', name: 'listener.{l}.downstream_cx_active', series: 'envoy_listener_downstream_cx_active' },
  { kind: 'cx_total', name: 'listener.{l}.downstream_cx_total', series: 'envoy_listener_downstream_cx_total' },
  { kind: 'rq_completed', name: 'listener.{l}.http.{m}.downstream_rq_completed', series: 'envoy_listener_http_downstream_rq_completed' },
  { kind: 'http_cx_active', name: 'http.{m}.downstream_cx_active', series: 'envoy_http_downstream_cx_active' },
  { kind: 'rq_active', name: 'http.{m}.downstream_rq_active', series: 'envoy_http_downstream_rq_active' },
  { kind: 'rq_total', name: 'http.{m}.downstream_rq_total', series: 'envoy_http_downstream_rq_total' },
  { kind: 'total_connections', name: TOTAL_CONNECTIONS_STAT, series: 'envoy_server_total_connections' },
  { kind: 'uptime', name: 'server.uptime', series: 'envoy_server_uptime' },
  ...['added', 'modified', 'removed', 'in_place_updated'].map((update) => ({
    kind: 'listener_update' as const,
    name: `listener_manager.listener_${update}`,
    series: `envoy_listener_manager_listener_${update}`,
  })),
];

export const LISTENER_LABEL = 'envoy_listener_address';
export const MANAGER_LABEL = 'envoy_http_conn_manager_prefix';

export interface SeriesShape {
  readonly kind: StatKind;
  readonly labels: readonly string[];
}

/** Series name → what it says and the labels it has, no more and no fewer. */
export const SERIES: ReadonlyMap<string, SeriesShape> = new Map(
  STATS.map(({ kind, name, series }) => [
    series,
    { kind, labels: [...(name.includes('{l}') ? [LISTENER_LABEL] : []), ...(name.includes('{m}') ? [MANAGER_LABEL] : [])] },
  ]),
);

/**
 * Series every reader leaves out: the per-worker copies of a listener's stats (already in its own)
 * and the admin listener's, which Envoy names without labels.
 */
export const SKIPPED_SERIES = /^envoy_listener_(worker_|admin_)/;

const ESCAPED = (text: string): string => text.replace(/[.]/g, '\\.');

/** Envoy's name for each kind as a regular expression: `{l}` and `{m}` captured, the rest literal. */
const NAME_PATTERNS: ReadonlyArray<{ readonly kind: StatKind; readonly pattern: RegExp; readonly ending: string }> = STATS.map(({ kind, name }) => ({
  kind,
  ending: name.slice(name.lastIndexOf('.')),
  // A listener-and-manager name is captured whole: both may hold dots, so only the listeners read tell where `.http.` splits it.
  pattern: new RegExp(`^${ESCAPED(name).replace('{l}\\.http\\.{m}', '(.+\\.http\\..+)').replace('{l}', '(.+)').replace('{m}', '(.+)')}$`),
}));

/** The kind of an Envoy stat name and what it captured (a listener, a manager, or `<listener>.http.<manager>`); undefined for any other name. */
export function matchStatName(name: string): { readonly kind: StatKind; readonly captured: string } | undefined {
  for (const { kind, pattern, ending } of NAME_PATTERNS) {
    if (!name.endsWith(ending)) continue;
    const match = pattern.exec(name);
    if (match !== null) return { kind, captured: match[1] ?? '' };
  }
  return undefined;
}

/** Where a listener's name ends and a connection manager's begins in a `rq_completed` name. */
export const LISTENER_HTTP_SEPARATOR = '.http.';

/** Per-thread copies of a listener's stats (`listener.<name>.worker_3.*`), already in the listener's sum. */
export const PER_THREAD_COPY = /\.(worker_\d+|main_thread)$/;

/** Whether a listener stats scope is the admin API's own. */
export function isAdminListener(listener: string): boolean {
  return listener === ADMIN_SCOPE || listener.startsWith(`${ADMIN_SCOPE}.`);
}

/** A listener's live gauge or accepted counter by name; `<name>` in messages about any listener. */
export function listenerStatName(listener: string, kind: 'cx_active' | 'cx_total'): string {
  return `listener.${listener}.downstream_${kind}`;
}

/** What to tell a person whose Envoy does not export the listener stats (a stats_matcher in the bootstrap). */
export const LISTENER_STATS_HINT =
  'if the bootstrap has a stats_config.stats_matcher, let ^listener\\..*\\.downstream_cx_(active|total)$ through; or use --connections total';

/**
 * One segment (no dot) that is anything but `literal` followed by digits only, as a regular
 * expression Envoy's RE2 takes: it has no lookaround, so the segment is either a proper prefix of
 * `literal`, or leaves it at some character, or is `literal` followed by something other than digits.
 */
export function segmentOtherThan(literal: string): string {
  const prefixes = Array.from(literal, (_, length) => literal.slice(0, length));
  const shorter = prefixes.slice(1).join('|');
  const leaving = prefixes.map((prefix, at) => `${prefix}[^${literal[at] as string}.]`).join('|');
  return `(${shorter}|(${leaving})[^.]*|${literal}([0-9]*[^0-9.][^.]*)?)`;
}

/**
 * A listener's name in the filter: its last segment is never `worker_<n>`, so Envoy leaves out
 * the per-worker copies (one set per worker thread, already in the listener's own).
 */
const LISTENER_NAME = `(.*\\.)?${segmentOtherThan('worker_')}`;

/** Which families of stats one read asks for; the listeners' always. */
export interface StatsWanted {
  /** server.total_connections and server.uptime. */
  readonly server?: boolean;
  /** The connection managers' stats and the per-listener ones that pair them with listeners: they tell idle connections. */
  readonly requests?: boolean;
}

/** One /stats filter (a regular expression Envoy matches names against) for all `wanted`. */
export function statsFilter(wanted: StatsWanted): string {
  const parts = [
    ...(wanted.server === true ? ['server\\.(total_connections|uptime)'] : []),
    'listener_manager\\.listener_(added|modified|removed|in_place_updated)',
    `listener\\.${LISTENER_NAME}\\.downstream_cx_(active|total)`,
    ...(wanted.requests === true ? ['http\\..*\\.downstream_(cx_active|rq_active|rq_total)', 'listener\\..*\\.http\\..*\\.downstream_rq_completed'] : []),
  ];
  return `^(${parts.join('|')})$`;
}
