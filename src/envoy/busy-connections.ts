// Which connections are busy, once connections.ts has paired the listeners with their HTTP
// connection managers, and which listeners the ignore rules leave out. Pure. A listener's connections are its HTTP connection managers'
// connections plus anything else (a TCP proxy's, a connection still in its listener filters); an
// HTTP connection is busy while it has a request in flight. Listeners that share a connection
// manager are judged together, since its gauges are their sum. Whatever cannot be told for certain
// counts as busy: the drain then waits, it never releases Envoy on a guess.
export interface ListenerCounts {
  /** Live connections on this listener; undefined when the read did not name its gauge. */
  readonly active: number | undefined;
  /** Connections it ever accepted; undefined when the read did not name its counter. */
  readonly accepted: number | undefined;
}

export interface HttpCounts {
  /** An HTTP connection manager's connections, requests in flight (an HTTP/2 stream counts as one), and requests ever received. */
  readonly connections: number;
  readonly activeRequests: number;
  readonly requests: number;
}

/** The HTTP connection managers a listener's chains end in. */
export interface ListenerServes {
  /** Their stat prefixes. None: the listener serves no HTTP (a TCP proxy, TLS passthrough), so its connections are all busy. */
  readonly connectionManagers: ReadonlySet<string>;
  /** Why they cannot be told for certain; set: the listener's connections are all busy. */
  readonly unreadable?: string;
}

export interface ListenerTopology {
  /** Keyed by the listener's stats scope name: `listener.<key>.downstream_cx_active`. */
  readonly byStatName: ReadonlyMap<string, ListenerServes>;
}

/**
 * The pairing a reading was judged with, from Envoy's own stats; `key` is the same for the same
 * pairing, read again. `unknown`: why no listener could be paired (every connection counts as busy).
 */
export interface Pairing {
  readonly topology: ListenerTopology;
  readonly key: string;
  readonly unknown?: string;
}

/** Listeners never counted: by stats name, or by the connection managers that serve them. */
export interface IgnoreRules {
  /** --ignore-listener: stats names (`listener.<name>.*`), matched exactly. */
  readonly ignoreListener: ReadonlySet<string>;
  /** A listener whose every chain ends in one of these connection managers is not counted. */
  readonly ignoreConnectionManagers: ReadonlySet<string>;
}

/** The stats scope names of the listeners the rules leave out, among `seen` (the ones /stats reports). */
export function ignoredListeners(seen: Iterable<string>, rules: IgnoreRules, topology: ListenerTopology | undefined): Set<string> {
  const ignored = new Set<string>();
  for (const statName of seen) {
    const serves = topology?.byStatName.get(statName);
    const byName = rules.ignoreListener.has(statName);
    const byManager =
      serves !== undefined &&
      serves.unreadable === undefined &&
      serves.connectionManagers.size > 0 &&
      [...serves.connectionManagers].every((prefix) => rules.ignoreConnectionManagers.has(prefix));
    if (byName || byManager) ignored.add(statName);
  }
  return ignored;
}

export interface PairedCounts {
  /** Connections on the counted listeners that carry work: requests in flight, and every connection that cannot be told idle. */
  readonly busy: number;
  /** Requests ever received by the connection managers that serve counted listeners. */
  readonly requests: number;
}

/** The parts of a reading the pairing judges (a ConnectionReading has them when requests were read). */
export interface PairableReading {
  readonly listeners?: ReadonlyMap<string, ListenerCounts>;
  readonly ignored?: ReadonlySet<string>;
  readonly http?: ReadonlyMap<string, HttpCounts>;
  readonly pairing?: Pairing;
}

/** pairedCounts of a reading; undefined when it was read without requests, or a counted listener has no live gauge. */
export function pairedReading(reading: PairableReading): PairedCounts | undefined {
  const { listeners, http, pairing } = reading;
  if (listeners === undefined || http === undefined || pairing === undefined) return undefined;
  return pairedCounts(listeners, reading.ignored ?? new Set(), http, pairing);
}

/**
 * `counted`: the listeners the drain waits for (each with its live gauge); `ignored`: the ones it
 * leaves out; `http`: every connection manager's gauges but the admin API's. Undefined when a
 * counted listener has no live gauge.
 */
export function pairedCounts(
  counted: ReadonlyMap<string, ListenerCounts>,
  ignored: ReadonlySet<string>,
  http: ReadonlyMap<string, HttpCounts>,
  pairing: Pairing,
): PairedCounts | undefined {
  let busy = 0;
  let requests = 0;
  for (const listener of counted.values()) if (listener.active === undefined) return undefined;
  for (const group of groups([...counted.keys(), ...ignored], pairing.topology)) {
    const active = group.listeners.reduce((sum, name) => sum + (counted.get(name)?.active ?? 0), 0);
    if (!group.listeners.some((name) => counted.has(name))) continue;
    const managers = [...group.connectionManagers].map((prefix) => http.get(prefix));
    for (const manager of managers) requests += manager?.requests ?? 0;
    // A group that also serves a listener left out, or that cannot be read in full: all busy.
    const certain = group.known && !group.listeners.some((name) => ignored.has(name)) && managers.every((m) => m !== undefined);
    if (!certain) {
      busy += active;
      continue;
    }
    let httpConnections = 0;
    let inFlight = 0;
    for (const manager of managers as HttpCounts[]) {
      httpConnections += manager.connections;
      inFlight += manager.activeRequests;
    }
    busy += Math.max(0, active - httpConnections) + inFlight;
  }
  return { busy, requests };
}

interface Group {
  readonly listeners: string[];
  readonly connectionManagers: Set<string>;
  /** Every listener of the group is in the configuration with readable chains. */
  known: boolean;
}

/** Listeners joined by the connection managers they share (the connected parts of that graph). */
function groups(listeners: readonly string[], topology: ListenerTopology): Group[] {
  const byManager = new Map<string, Group>();
  const result: Group[] = [];
  for (const name of listeners) {
    const serves = topology.byStatName.get(name);
    const own: Group = {
      listeners: [name],
      connectionManagers: new Set(serves?.connectionManagers),
      known: serves !== undefined && serves.unreadable === undefined,
    };
    // Merge every group already holding one of this listener's connection managers into this one.
    const joined = new Set<Group>();
    for (const prefix of own.connectionManagers) {
      const other = byManager.get(prefix);
      if (other !== undefined) joined.add(other);
    }
    for (const other of joined) {
      own.listeners.push(...other.listeners);
      for (const prefix of other.connectionManagers) own.connectionManagers.add(prefix);
      own.known &&= other.known;
      result.splice(result.indexOf(other), 1);
    }
    for (const prefix of own.connectionManagers) byManager.set(prefix, own);
    result.push(own);
  }
  return result;
}

/** Which connection managers serve each listener (by its stats name), for a person: `status`, `--dry-run`, the drain's log. */
export interface PairingReport {
  readonly listeners: Readonly<Record<string, { readonly connectionManagers: readonly string[]; readonly notHttp?: true }>>;
}

export function describePairing(pairing: Pairing): PairingReport {
  const listeners = [...pairing.topology.byStatName].map(([name, serves]) => [
    name,
    {
      connectionManagers: [...serves.connectionManagers],
      ...(serves.connectionManagers.size === 0 || serves.unreadable !== undefined ? { notHttp: true as const } : {}),
    },
  ]);
  return { listeners: Object.fromEntries(listeners) };
}
