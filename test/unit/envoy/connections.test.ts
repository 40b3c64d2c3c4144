import { describe, expect, it } from 'vitest';
import { countedListeners, fullReadWanted, pairingOf, sumOf, tableOf, totalConnections, withFull } from '../../../src/envoy/connections.js';
import type { StatRecord } from '../../../src/envoy/stat-names.js';
import { AMBIGUOUS, statsAnswer } from '../../../src/envoy/stats-answer.js';
import { FULL_PROMETHEUS } from '../support/envoy-answers.js';

const active = (listener: string, value: number): StatRecord => ({ kind: 'cx_active', listener, manager: '', value });
const accepted = (listener: string, value: number): StatRecord => ({ kind: 'cx_total', listener, manager: '', value });
const pair = (listener: string, manager: string): StatRecord => ({ kind: 'rq_completed', listener, manager, value: 0 });
const updates = (value: number): StatRecord => ({ kind: 'listener_update', listener: '', manager: '', value });
const managersOf = (records: readonly StatRecord[]): Record<string, { managers: string[]; unreadable: string | undefined }> =>
  Object.fromEntries(
    [...pairingOf(tableOf(records), false).topology.byStatName].map(([name, serves]) => [
      name,
      { managers: [...serves.connectionManagers].sort(), unreadable: serves.unreadable },
    ]),
  );

describe('tableOf', () => {
  it('groups the records by listener and connection manager, and sums the listener update counters', () => {
    const table = tableOf([
      active('l', 2),
      accepted('l', 9),
      accepted('only-counter', 1),
      { kind: 'http_cx_active', listener: '', manager: 'h', value: 2 },
      { kind: 'rq_active', listener: '', manager: 'h', value: 1 },
      { kind: 'rq_total', listener: '', manager: 'h', value: 30 },
      { kind: 'rq_total', listener: '', manager: 'idle', value: 4 },
      pair('l', 'h'),
      pair('l', 'other'),
      { kind: 'total_connections', listener: '', manager: '', value: 5 },
      { kind: 'uptime', listener: '', manager: '', value: 60 },
      updates(3),
      updates(2),
    ]);
    expect(Object.fromEntries(table.listeners)).toEqual({ l: { active: 2, accepted: 9 }, 'only-counter': { active: undefined, accepted: 1 } });
    // A usedonly read leaves out a manager's stats that never moved: 0.
    expect(Object.fromEntries(table.http)).toEqual({
      h: { connections: 2, activeRequests: 1, requests: 30 },
      idle: { connections: 0, activeRequests: 0, requests: 4 },
    });
    expect(table.pairs).toEqual(new Map([['l', new Set(['h', 'other'])]]));
    expect(table).toMatchObject({ totalConnections: 5, uptimeS: 60, listenerUpdates: 5 });
  });

  it("reads a real full answer, which names all four of the listener manager's update counters", () => {
    const answer = statsAnswer('prometheus');
    for (const line of FULL_PROMETHEUS.split('\n')) answer.line(line);
    const read = answer.finish();
    if (!('records' in read)) throw new Error(read.unreadable);
    expect(tableOf(read.records)).toMatchObject({ listenerUpdates: 4, totalConnections: 0, uptimeS: 0 });
  });

  it('refuses a stat named twice, whatever the values: not an answer of Envoy', () => {
    expect(() => tableOf([active('a', 0), active('a', 3)])).toThrow(/\/stats names cx_active of a more than once/);
    expect(() => tableOf([pair('a', 'h'), pair('a', 'h')])).toThrow(/rq_completed of a more than once/);
    expect(() =>
      tableOf([
        { kind: 'uptime', listener: '', manager: '', value: 1 },
        { kind: 'uptime', listener: '', manager: '', value: 2 },
      ]),
    ).toThrow(/uptime of the server more than once/);
    // Two pairing names of one listener that split at another are one doubt, not a duplicate.
    expect(tableOf([pair('a', AMBIGUOUS), pair('a', AMBIGUOUS)]).pairs).toEqual(new Map([['a', new Set([AMBIGUOUS])]]));
  });

  it('has no server stats when the read named none', () => {
    expect(tableOf([])).toMatchObject({ totalConnections: undefined, uptimeS: undefined, listenerUpdates: 0 });
  });
});

describe('withFull', () => {
  const full = tableOf([active('busy', 0), accepted('busy', 0), active('quiet', 0), accepted('quiet', 0), pair('quiet', 'q'), pair('busy', 'b'), updates(2)]);

  it('completes a usedonly read with the listeners and pairings the full read named, at 0', () => {
    const table = withFull(tableOf([active('busy', 1), accepted('busy', 1), pair('busy', 'b2'), updates(2)]), full);
    expect(Object.fromEntries(table.listeners)).toEqual({ busy: { active: 1, accepted: 1 }, quiet: { active: 0, accepted: 0 } });
    expect(table.pairs).toEqual(
      new Map([
        ['busy', new Set(['b', 'b2'])],
        ['quiet', new Set(['q'])],
      ]),
    );
  });

  it('keeps the usedonly read as it is once the listeners changed, or without a full read', () => {
    const moved = tableOf([active('busy', 1), updates(3)]);
    expect(withFull(moved, full)).toBe(moved);
    expect(withFull(moved, undefined)).toBe(moved);
  });
});

describe('pairingOf', () => {
  it('pairs each listener with every connection manager named on it; one named on none serves no HTTP', () => {
    expect(
      managersOf([active('0.0.0.0_10443', 1), active('tcp', 1), pair('0.0.0.0_10443', 'https-10443'), pair('second', 'a.http.b'), pair('second', 'plain')]),
    ).toEqual({
      '0.0.0.0_10443': { managers: ['https-10443'], unreadable: undefined },
      tcp: { managers: [], unreadable: undefined },
      second: { managers: ['a.http.b', 'plain'], unreadable: undefined },
    });
  });

  it('leaves a listener unreadable when one of its pairing names could be split at another listener', () => {
    expect(managersOf([active('a', 1), pair('a', AMBIGUOUS), pair('a', 'known')])).toEqual({
      a: { managers: ['known'], unreadable: expect.stringMatching(/more than one listener/) as unknown },
    });
  });

  it('says the pairing is unknown when a full read names connection managers but no pairing stat (a stats_matcher dropped them)', () => {
    const records: StatRecord[] = [active('l', 2), { kind: 'http_cx_active', listener: '', manager: 'h', value: 2 }];
    expect(pairingOf(tableOf(records), true).unknown).toMatch(/stats_matcher/);
    // A usedonly read alone cannot tell: the pairing stat may just never have moved.
    expect(pairingOf(tableOf(records), false).unknown).toBeUndefined();
    expect(pairingOf(tableOf([...records, pair('l', 'h')]), true).unknown).toBeUndefined();
  });

  it('gives the same key to the same pairing read again, whatever the order, and another to another', () => {
    const records = [active('x', 1), active('y', 0), pair('x', 'p'), pair('y', 'q'), pair('y', 'r')];
    const key = pairingOf(tableOf(records), false).key;
    expect(pairingOf(tableOf([...records].reverse()), false).key).toBe(key);
    expect(pairingOf(tableOf([...records, pair('x', 'q')]), false).key).not.toBe(key);
    expect(pairingOf(tableOf([...records, pair('z', AMBIGUOUS)]), false).key).not.toBe(key);
  });
});

describe('fullReadWanted', () => {
  const none = new Set<string>();
  const wanted = (records: StatRecord[], ignored: ReadonlySet<string> = none, paired = true): boolean => {
    const table = tableOf(records);
    return fullReadWanted(table, paired ? pairingOf(table, false) : undefined, ignored);
  };

  it('wants one when the read named no listener stat at all, paired or not', () => {
    expect(wanted([updates(1)])).toBe(true);
    expect(wanted([updates(1)], none, false)).toBe(true);
  });

  it('wants one when a counted listener with connections has no pairing stat: a full read may name one that never moved', () => {
    expect(wanted([active('l', 2)])).toBe(true);
    expect(wanted([active('l', 2), pair('l', AMBIGUOUS)])).toBe(true);
  });

  it('wants none for a paired listener, one without connections, an ignored one, or when nothing needs the pairing', () => {
    expect(wanted([active('l', 2), pair('l', 'h')])).toBe(false);
    expect(wanted([active('l', 0), accepted('l', 4)])).toBe(false);
    expect(wanted([accepted('l', 4)])).toBe(false);
    expect(wanted([active('l', 2)], new Set(['l']))).toBe(false);
    expect(wanted([active('l', 2)], none, false)).toBe(false);
  });
});

describe('countedListeners and sumOf', () => {
  const none = new Set<string>();
  const counted = (records: StatRecord[], ignored: ReadonlySet<string> = none) => countedListeners(tableOf(records), ignored);

  it('counts every listener but the ignored ones, matched exactly', () => {
    const listeners = counted(
      [active('0.0.0.0_10000', 4), accepted('0.0.0.0_10000', 40), active('stats', 1), active('stats-19001', 5), active('ready', 2)],
      new Set(['stats', 'ready', '0.0.0.0']),
    );
    expect(Object.fromEntries(listeners)).toEqual({ '0.0.0.0_10000': { active: 4, accepted: 40 }, 'stats-19001': { active: 5, accepted: undefined } });
    expect(sumOf(listeners, 'active')).toBe(9);
  });

  it('reads a stat the read left out as 0: it never moved', () => {
    const listeners = counted([active('gauge-only', 0), accepted('counter-only', 0), accepted('closed', 3), active('closed', 0)]);
    expect(Object.fromEntries(listeners)).toEqual({
      'gauge-only': { active: 0, accepted: 0 },
      'counter-only': { active: 0, accepted: 0 },
      closed: { active: 0, accepted: 3 },
    });
    expect(sumOf(listeners, 'accepted')).toBe(3);
  });

  it('is unknown, never 0, when a gauge is missing though its counter moved, or the other way round (a stats_matcher dropped it)', () => {
    const listeners = counted([accepted('no-gauge', 7), active('no-counter', 2)]);
    expect(Object.fromEntries(listeners)).toEqual({ 'no-gauge': { active: undefined, accepted: 7 }, 'no-counter': { active: 2, accepted: undefined } });
    expect(() => sumOf(listeners, 'active')).toThrow(/no listener\.no-gauge\.downstream_cx_active gauge: .*stats_matcher/);
    expect(() => sumOf(listeners, 'accepted')).toThrow(/no listener\.no-counter\.downstream_cx_total counter: .*stats_matcher/);
  });

  it('fails, naming the stats_matcher, when the read has no listener stat at all', () => {
    expect(() => counted([updates(3)])).toThrow(/no listener\.<name>\.downstream_cx_active gauges: if the bootstrap has a stats_config\.stats_matcher/);
  });

  it('reads 0 when every listener is ignored on purpose', () => {
    expect(sumOf(counted([active('stats', 2)], new Set(['stats'])), 'active')).toBe(0);
  });
});

describe('totalConnections', () => {
  it('reads the gauge, or fails when the read did not name it', () => {
    expect(totalConnections(tableOf([{ kind: 'total_connections', listener: '', manager: '', value: 7 }]))).toBe(7);
    expect(() => totalConnections(tableOf([]))).toThrow(/no server\.total_connections gauge/);
  });
});
