// A fake Envoy admin API that answers stats reads from a list of stats as real Envoy does: the
// query's `usedonly` and `filter` applied to the stats' names, the answer in the format the path
// asks for, handed over a line at a time. Each read can be given a cost, on a clock of its own.
import type { EnvoyAdmin, LineReader } from '../../../src/envoy/admin-client.js';
import { type FakeStat, prometheusText } from './prometheus-text.js';
import { statsText } from './stats-text.js';

export interface FakeAdmin extends EnvoyAdmin {
  /** Every GET, in order. */
  readonly paths: string[];
  /** The fake's clock, in ms: each read moves it on by its cost. */
  readonly now: () => number;
}

/** `costMs`: what each GET takes, by its path (default 0). */
export function fakeAdmin(stats: () => readonly FakeStat[], costMs: (path: string) => number = () => 0): FakeAdmin {
  const paths: string[] = [];
  let now = 0;
  const answer = (path: string): string => {
    const at = path.indexOf('?');
    const [endpoint, query] = at === -1 ? [path, ''] : [path.slice(0, at), path.slice(at + 1)];
    const usedOnly = /(^|&)usedonly(&|$)/.test(query);
    const filterAt = query.indexOf('filter=');
    // The filter is the query's last parameter, sent unencoded.
    const filter = filterAt === -1 ? undefined : new RegExp(query.slice(filterAt + 'filter='.length));
    if (endpoint === '/stats/prometheus') return prometheusText(stats(), usedOnly, filter);
    if (endpoint === '/stats') return statsText(stats(), usedOnly, filter);
    throw new Error(`the fake admin API has no ${endpoint}`);
  };
  return {
    paths,
    now: () => now,
    post: () => Promise.resolve(''),
    get(path) {
      paths.push(path);
      return Promise.resolve(path === '/server_info' ? '{"state":"LIVE"}' : answer(path));
    },
    getLines(path: string, reader: LineReader) {
      paths.push(path);
      now += costMs(path);
      for (const line of answer(path).split('\n')) reader.line(line);
      return Promise.resolve();
    },
    close: () => Promise.resolve(),
  };
}
