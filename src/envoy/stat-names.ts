// Every Envoy stat this tool reads, each name spelled once: the /stats filter sent to Envoy and the
// patterns that parse its answer are both built from these, so they cannot disagree.

/** The gauge Envoy Gateway's design reads. Only recomputed at each stats flush (5 s by default). */
export const TOTAL_CONNECTIONS_STAT = 'server.total_connections';
/** Seconds since Envoy started, set only at a stats flush: when it moves, the flush gauges are new. */
export const UPTIME_STAT = 'server.uptime';

/**
 * The admin API's own stats scope, as a listener (`listener.admin.*`) and as a connection manager
 * (`http.admin.*`): our polling connection and request live there, so it is never counted.
 */
export const ADMIN_SCOPE = 'admin';

/** A listener's live connections (`active`) and the connections it ever accepted (`total`). */
const LISTENER_SUFFIXES = ['active', 'total'] as const;
const LISTENER_SUFFIX = `downstream_cx_(${LISTENER_SUFFIXES.join('|')})`;
/** An HTTP connection manager's live connections, requests in flight, and requests ever received. */
const HTTP_SUFFIXES = ['cx_active', 'rq_active', 'rq_total'] as const;
const HTTP_SUFFIX = `downstream_(${HTTP_SUFFIXES.join('|')})`;
/**
 * A connection manager's requests completed on one listener: Envoy makes it for every listener
 * each connection manager serves, as the listener loads (value 0 included), so its name pairs them.
 */
const LISTENER_HTTP_SUFFIX = 'downstream_rq_completed';
const SERVER_STATS = 'server\\.(total_connections|uptime)';
/**
 * Counters that move whenever Envoy adds, changes or removes a listener: while they stand still,
 * the listeners and their connection managers are the ones an earlier read saw.
 */
const LISTENER_UPDATES = ['added', 'modified', 'removed', 'in_place_updated'] as const;
const LISTENER_UPDATE_STATS = `listener_manager\\.listener_(${LISTENER_UPDATES.join('|')})`;

/**
 * One name segment (no dot) that is anything but `literal` followed by digits only, as a regular
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
 * A listener's name in the stats filter: it may hold dots (`0.0.0.0_10000`), but its last segment
 * is never `worker_<n>`, so Envoy leaves out the per-worker copies (`listener.<name>.worker_0.*`,
 * one set per worker thread, already in the listener's own): at 1,000 listeners and two workers
 * they would be 4 of every 10 series a full read names.
 */
const LISTENER_NAME = `(.*\\.)?${segmentOtherThan('worker_')}`;

/** `listener.<name>.downstream_cx_active|total`; the name may hold dots (`0.0.0.0_10000`). */
const LISTENER_STAT = new RegExp(`^listener\\.(.+)\\.${LISTENER_SUFFIX}$`);
/** `http.<stat prefix>.downstream_cx_active|rq_active|rq_total`. */
const HTTP_STAT = new RegExp(`^http\\.(.+)\\.${HTTP_SUFFIX}$`);
/** `listener.<name>.http.<stat prefix>.downstream_rq_completed`: both names may hold dots, so the caller splits it. */
const LISTENER_HTTP_STAT = new RegExp(`^listener\\.(.+\\.http\\..+)\\.${LISTENER_HTTP_SUFFIX}$`);
/** Where a listener's name ends and a connection manager's begins in the middle of a LISTENER_HTTP_STAT name. */
export const LISTENER_HTTP_SEPARATOR = '.http.';

/**
 * `pattern.exec(name)` for names with one of `endings`, null for the rest without running it: a
 * read of a thousand listeners passes each of its thousands of names to every matcher. (Names
 * are matched afresh at each read: remembering them cost more than matching them again.)
 */
function matcher(pattern: RegExp, endings: readonly string[]): (name: string) => RegExpExecArray | null {
  return (name) => (endings.some((ending) => name.endsWith(ending)) ? pattern.exec(name) : null);
}
export const matchListenerStat = matcher(LISTENER_STAT, LISTENER_SUFFIXES.map((suffix) => `.downstream_cx_${suffix}`));
export const matchHttpStat = matcher(HTTP_STAT, HTTP_SUFFIXES.map((suffix) => `.downstream_${suffix}`));
export const matchListenerHttpStat = matcher(LISTENER_HTTP_STAT, [`.${LISTENER_HTTP_SUFFIX}`]);

/** Per-thread copies of a listener's stats (`listener.<name>.worker_3.*`), already in the listener's sum. */
export const PER_THREAD_COPY = /\.(worker_\d+|main_thread)$/;

/** A listener's live gauge (`active`) or accepted counter (`total`) by name; `<name>` in messages about any listener. */
export function listenerStatName(listener: string, kind: 'active' | 'total'): string {
  return `listener.${listener}.downstream_cx_${kind}`;
}

/** What to tell a person whose Envoy does not export the listener stats (a stats_matcher in the bootstrap). */
export const LISTENER_STATS_HINT = `if the bootstrap has a stats_config.stats_matcher, let ^listener\\..*\\.${LISTENER_SUFFIX}$ through; or use --connections total`;

/** Which families of stats one /stats read asks for. */
export interface StatsWanted {
  /** server.total_connections and server.uptime. */
  readonly server?: boolean;
  /** The HTTP connection managers' stats and the per-listener ones that pair them with listeners: they tell idle connections. */
  readonly requests?: boolean;
  /** The listener manager's counters of listener updates (LISTENER_UPDATES). */
  readonly listenerUpdates?: boolean;
}

/** One /stats filter (a regular expression Envoy matches names against) for all `wanted`; the listener stats always. */
export function statsFilter(wanted: StatsWanted): string {
  const parts = [
    ...(wanted.server === true ? [SERVER_STATS] : []),
    ...(wanted.listenerUpdates === true ? [LISTENER_UPDATE_STATS] : []),
    `listener\\.${LISTENER_NAME}\\.${LISTENER_SUFFIX}`,
    ...(wanted.requests === true ? [`http\\..*\\.${HTTP_SUFFIX}`, `listener\\..*\\.http\\..*\\.${LISTENER_HTTP_SUFFIX}`] : []),
  ];
  return parts.length === 1 ? `^${parts[0]}$` : `^(${parts.join('|')})$`;
}

const LISTENER_UPDATE_STAT = new RegExp(`^${LISTENER_UPDATE_STATS}$`);
/** Whether `name` is one of the listener manager's update counters. */
export function isListenerUpdateStat(name: string): boolean {
  return LISTENER_UPDATE_STAT.test(name);
}

/**
 * The names Envoy's Prometheus endpoint gives the stats above under its default tags: each
 * `{tag}.` of the stat's name is taken out into the label of that name, the rest, dots made
 * underscores, is the series' name after `envoy_`. A series of any other shape (a listener's own
 * stat_prefix, a connection manager's prefix with a dot, tags of the bootstrap's own) cannot be
 * turned back into its stat's name.
 */
export const PROMETHEUS_TEMPLATES: readonly string[] = [
  TOTAL_CONNECTIONS_STAT,
  UPTIME_STAT,
  ...LISTENER_UPDATES.map((update) => `listener_manager.listener_${update}`),
  ...LISTENER_SUFFIXES.flatMap((suffix) => [
    `listener.{envoy_listener_address}.downstream_cx_${suffix}`,
    `listener.{envoy_listener_address}.worker_{envoy_worker_id}.downstream_cx_${suffix}`,
    `listener.${ADMIN_SCOPE}.downstream_cx_${suffix}`,
    `listener.${ADMIN_SCOPE}.main_thread.downstream_cx_${suffix}`,
  ]),
  `listener.{envoy_listener_address}.http.{envoy_http_conn_manager_prefix}.${LISTENER_HTTP_SUFFIX}`,
  `listener.${ADMIN_SCOPE}.http.{envoy_http_conn_manager_prefix}.${LISTENER_HTTP_SUFFIX}`,
  ...HTTP_SUFFIXES.map((suffix) => `http.{envoy_http_conn_manager_prefix}.downstream_${suffix}`),
];

/** Whether a listener stats scope is the admin API's own. */
export function isAdminListener(listener: string): boolean {
  return listener === ADMIN_SCOPE || listener.startsWith(`${ADMIN_SCOPE}.`);
}
