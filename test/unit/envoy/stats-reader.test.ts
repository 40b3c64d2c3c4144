import { performance } from 'node:perf_hooks';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { statsFilter } from '../../../src/envoy/stat-names.js';
import { formatToUse, type ReadKind, StatsReader, statsPath, TRY_TEXT_ABOVE_MS } from '../../../src/envoy/stats-reader.js';
import { type FakeAdmin, fakeAdmin } from '../support/fake-admin.js';
import type { FakeStat } from '../support/prometheus-text.js';

afterEach(() => {
  vi.restoreAllMocks();
});

const wanted = { requests: true } as const;
const STATS: FakeStat[] = [
  { name: 'listener_manager.listener_added', value: 1 },
  { name: 'listener.0.0.0.0_80.downstream_cx_active', value: 1 },
  { name: 'listener.0.0.0.0_80.downstream_cx_total', value: 1 },
  { name: 'listener.0.0.0.0_443.downstream_cx_active', value: 0 },
];

/** A reader of a fake Envoy whose reads take `costMs` each, on the fake's clock. */
function readerOf(stats: readonly FakeStat[], costMs: (path: string) => number): { reader: StatsReader; admin: FakeAdmin } {
  const admin = fakeAdmin(() => stats, costMs);
  vi.spyOn(performance, 'now').mockImplementation(() => admin.now());
  return { reader: new StatsReader(admin, wanted), admin };
}

/** The format and kind of each GET. */
const reads = (admin: FakeAdmin): string[] =>
  admin.paths.map((path) => `${path.startsWith('/stats/prometheus?') ? 'prometheus' : 'text'} ${path.includes('usedonly') ? 'used' : 'full'}`);

describe('statsPath', () => {
  it('asks for the stats that moved, or all, of the filter, in either format', () => {
    const filter = statsFilter(wanted);
    expect(statsPath('prometheus', 'used', wanted)).toBe(`/stats/prometheus?usedonly&filter=${filter}`);
    expect(statsPath('prometheus', 'full', wanted)).toBe(`/stats/prometheus?filter=${filter}`);
    expect(statsPath('text', 'used', wanted)).toBe(`/stats?usedonly&filter=${filter}`);
    expect(statsPath('text', 'full', wanted)).toBe(`/stats?filter=${filter}`);
  });
});

describe('formatToUse', () => {
  const dear = TRY_TEXT_ABOVE_MS;
  it.each<[string, Record<string, number | [number, number]>, ReadKind, boolean, 'prometheus' | 'text']>([
    ['Prometheus first', {}, 'used', false, 'prometheus'],
    ['Prometheus while it is cheap', { 'prometheus used': dear - 0.1 }, 'used', false, 'prometheus'],
    ['the text /stats tried once two Prometheus reads were dear', { 'prometheus used': dear }, 'used', false, 'text'],
    [
      'Prometheus again after one dear read: a first read pays for its connection and warm-up',
      { 'prometheus used': [dear * 10, 1] },
      'used',
      false,
      'prometheus',
    ],
    ['the text /stats when it was cheaper', { 'prometheus used': dear + 3, 'text used': dear + 2 }, 'used', false, 'text'],
    ['Prometheus when the text /stats was dearer', { 'prometheus used': dear + 3, 'text used': dear + 4 }, 'used', false, 'prometheus'],
    ['Prometheus on a tie', { 'prometheus used': dear + 3, 'text used': dear + 3 }, 'used', false, 'prometheus'],
    ['each kind by its own prices', { 'prometheus full': dear * 10, 'text used': 0.1 }, 'used', false, 'prometheus'],
    ['each kind by its own prices, the other way', { 'prometheus used': 0.1, 'prometheus full': dear * 10 }, 'full', false, 'text'],
    ['the text /stats for good once Prometheus is unreadable', { 'prometheus used': 0.1, 'text used': 9 }, 'used', true, 'text'],
  ])('%s', (_what, prices, kind, unreadable, format) => {
    // A bare price rests on two reads; [price, reads] says how many.
    const priced = new Map(
      Object.entries(prices).map(([key, value]) => [key, typeof value === 'number' ? { ms: value, reads: 2 } : { ms: value[0], reads: value[1] }]),
    );
    expect(formatToUse(priced, kind, unreadable)).toBe(format);
  });
});

describe('StatsReader', () => {
  it('reads the stats that moved unless asked for all', async () => {
    const { reader, admin } = readerOf(STATS, () => 1);
    const used = await reader.read('used');
    const full = await reader.read('full');
    expect(used).toMatchObject({ kind: 'used', path: statsPath('prometheus', 'used', wanted) });
    expect(used.records.map((r) => `${r.kind} ${r.listener}`)).toEqual(['listener_update ', 'cx_active 0.0.0.0_80', 'cx_total 0.0.0.0_80']);
    expect(full).toMatchObject({ kind: 'full', path: statsPath('prometheus', 'full', wanted) });
    expect(full.records).toHaveLength(4);
    expect(reads(admin)).toEqual(['prometheus used', 'prometheus full']);
  });

  it("prices each kind of read at the least time one took: Envoy's work at most, since waiting only adds", async () => {
    const costs = [3, 2, 4];
    const { reader } = readerOf(STATS, (path) => (path.includes('usedonly') ? (costs.shift() ?? 9) : 4.5));
    expect(reader.priceOf('used')).toBe(0);
    const prices = [];
    for (let n = 0; n < 3; n += 1) prices.push((await reader.read('used')).priceMs);
    expect(prices).toEqual([3, 2, 2]);
    expect(reader.priceOf('used')).toBe(2);
    expect(reader.priceOf('full')).toBe(0);
    expect((await reader.read('full')).priceMs).toBe(4.5);
    expect(reader.priceOf('full')).toBe(4.5);
  });

  it('tries the text /stats once when a Prometheus read is dear, and keeps it when it is cheaper', async () => {
    const { reader, admin } = readerOf(STATS, (path) => (path.startsWith('/stats/prometheus') ? TRY_TEXT_ABOVE_MS + 3 : 1));
    const kept = [];
    // The same records in either format, in the order each names them.
    for (let n = 0; n < 4; n += 1) kept.push(JSON.stringify((await reader.read('used')).records.map((r) => JSON.stringify(r)).sort()));
    expect(reads(admin)).toEqual(['prometheus used', 'prometheus used', 'text used', 'text used']);
    expect(new Set(kept).size).toBe(1);
    expect(reader.priceOf('used')).toBe(1);
  });

  it('goes back to Prometheus for good when the text /stats was dearer', async () => {
    const { reader, admin } = readerOf(STATS, (path) => (path.startsWith('/stats/prometheus') ? TRY_TEXT_ABOVE_MS + 3 : TRY_TEXT_ABOVE_MS + 30));
    for (let n = 0; n < 4; n += 1) await reader.read('used');
    expect(reads(admin)).toEqual(['prometheus used', 'prometheus used', 'text used', 'prometheus used']);
  });

  it('never tries the text /stats while Prometheus reads are cheap', async () => {
    const { reader, admin } = readerOf(STATS, () => TRY_TEXT_ABOVE_MS - 1);
    for (let n = 0; n < 3; n += 1) await reader.read('used');
    await reader.read('full');
    expect(reads(admin)).toEqual(['prometheus used', 'prometheus used', 'prometheus used', 'prometheus full']);
  });

  it('reads the text /stats from then on when the Prometheus names cannot be read back, and says why', async () => {
    // A listener's stat_prefix with a dot: Envoy's tags take its first word as the address.
    const { reader, admin } = readerOf([...STATS, { name: 'listener.team.ingress.downstream_cx_active', value: 2 }], () => 1);
    const first = await reader.read('used');
    const full = await reader.read('full');
    expect(reads(admin)).toEqual(['prometheus used', 'text used', 'text full']);
    expect(first.textBecause).toMatch(/names envoy_listener_ingress_downstream_cx_active\{envoy_listener_address="team"\}, which this tool cannot read back/);
    expect(full.textBecause).toBe(first.textBecause);
    expect(first.records).toContainEqual({ kind: 'cx_active', listener: 'team.ingress', manager: '', value: 2 });
    expect(first.path).toBe(statsPath('text', 'used', wanted));
  });
});
