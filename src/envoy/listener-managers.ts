// Which HTTP connection managers serve which listener, from Envoy's own stats: for every listener a
// connection manager serves, Envoy makes `listener.<listener>.http.<prefix>.downstream_rq_completed`
// as the listener loads. Read with the counts in the same /stats call, the pairing is as current as
// they are, and costs the same whatever the number of filter chains or routes (the listeners'
// configuration, which grows with them, is never read). Pure.
import type { ListenerServes, Pairing } from './pairing.js';
import { ADMIN_SCOPE, LISTENER_HTTP_SEPARATOR, matchHttpStat, matchListenerHttpStat } from './stat-names.js';
import type { Stat } from './stats.js';

/** Why a pairing is unknown when Envoy has connection managers but /stats names none of them per listener. */
export const NO_LISTENER_HTTP_STATS =
  '/stats has HTTP connection managers but no listener.<name>.http.<prefix>.* stats that pair them with listeners (a stats_config.stats_matcher that drops them?)';

/**
 * The pairing of `listeners` (stats names, the admin listener left out) as `stats` shows it. A
 * listener no per-listener HTTP stat names serves no HTTP: its connections are all busy. A name
 * that could be split at two listeners leaves both unreadable, never guessed.
 */
export function pairingFromStats(stats: readonly Stat[], listeners: ReadonlySet<string>): Pairing {
  const managers = new Map<string, Set<string>>([...listeners].map((name) => [name, new Set<string>()]));
  const unreadable = new Map<string, string>();
  let paired = 0;
  let httpStats = 0;
  for (const { name } of stats) {
    const prefix = matchHttpStat(name)?.[1];
    if (prefix !== undefined && prefix !== ADMIN_SCOPE) httpStats += 1;
    const middle = matchListenerHttpStat(name)?.[1];
    if (middle === undefined) continue;
    const splits = splitsOf(middle, listeners);
    if (splits.length === 1) {
      const [listener, manager] = splits[0] as [string, string];
      managers.get(listener)?.add(manager);
      paired += 1;
    } else {
      for (const [listener] of splits) unreadable.set(listener, `${name} could name a connection manager of more than one listener`);
    }
  }
  if (httpStats > 0 && paired === 0) return { known: false, why: NO_LISTENER_HTTP_STATS, key: NO_LISTENER_HTTP_STATS };
  const byStatName = new Map<string, ListenerServes>();
  for (const [listener, connectionManagers] of managers) {
    const why = unreadable.get(listener);
    byStatName.set(listener, { connectionManagers, ...(why === undefined ? {} : { unreadable: why }) });
  }
  const key = JSON.stringify([...byStatName].map(([listener, serves]) => [listener, [...serves.connectionManagers].sort(), serves.unreadable ?? '']).sort());
  return { known: true, topology: { byStatName }, key };
}

/** `<listener>.http.<prefix>` split at each separator where the part before it is a known listener. */
function splitsOf(middle: string, listeners: ReadonlySet<string>): Array<[listener: string, manager: string]> {
  const splits: Array<[string, string]> = [];
  for (let at = middle.indexOf(LISTENER_HTTP_SEPARATOR); at !== -1; at = middle.indexOf(LISTENER_HTTP_SEPARATOR, at + 1)) {
    const listener = middle.slice(0, at);
    if (listener !== ADMIN_SCOPE && listeners.has(listener)) splits.push([listener, middle.slice(at + LISTENER_HTTP_SEPARATOR.length)]);
  }
  return splits;
}
