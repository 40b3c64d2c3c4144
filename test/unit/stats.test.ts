import { describe, expect, it } from 'vitest';
import { AdminError } from '../../src/errors.js';
import { countByListener, parseStatsJson, sumActive, totalConnections, type Stat } from '../../src/envoy/stats.js';

describe('parseStatsJson', () => {
  it('reads name/value pairs and skips histogram entries', () => {
    const body = JSON.stringify({
      stats: [
        { name: 'server.total_connections', value: 3 },
        { histograms: { supported_quantiles: [0.5], computed_quantiles: [] } },
        { name: 'server.version', value: 'abc' },
      ],
    });
    expect(parseStatsJson(body)).toEqual([{ name: 'server.total_connections', value: 3 }]);
  });

  it('accepts an empty list', () => {
    expect(parseStatsJson('{"stats":[]}')).toEqual([]);
  });

  it.each([['not json'], ['{"foo":1}'], ['[]'], ['null'], ['{"stats":{}}']])('rejects %j', (body) => {
    expect(() => parseStatsJson(body)).toThrow(AdminError);
    try {
      parseStatsJson(body);
    } catch (error) {
      expect((error as AdminError).code).toBe('ESM_ADMIN_BAD_RESPONSE');
    }
  });
});

describe('totalConnections', () => {
  it('reads the gauge', () => {
    expect(totalConnections([{ name: 'server.total_connections', value: 7 }])).toBe(7);
  });
  it('fails when the gauge is missing', () => {
    expect(() => totalConnections([])).toThrow(/no server.total_connections/);
  });
});

describe('countByListener', () => {
  const stats: Stat[] = [
    { name: 'listener.admin.downstream_cx_active', value: 1 },
    { name: 'listener.admin.main_thread.downstream_cx_active', value: 1 },
    { name: 'listener.admin.downstream_cx_total', value: 9 },
    { name: 'listener.0.0.0.0_10000.downstream_cx_active', value: 4 },
    { name: 'listener.0.0.0.0_10000.downstream_cx_total', value: 40 },
    { name: 'listener.0.0.0.0_10000.worker_0.downstream_cx_active', value: 3 },
    { name: 'listener.0.0.0.0_10000.worker_1.downstream_cx_active', value: 1 },
    { name: 'listener.[__]_10001.downstream_cx_active', value: 2 },
    { name: 'listener.stats.downstream_cx_active', value: 1 },
    { name: 'listener.stats-19001.downstream_cx_active', value: 5 },
    { name: 'listener.ready.downstream_cx_active', value: 2 },
    { name: 'http.ingress.downstream_cx_active', value: 100 },
    { name: 'listener_manager.total_listeners_active', value: 3 },
  ];

  it('sums listeners without admin, per-worker copies and ignored names', () => {
    const counts = countByListener(stats, new Set(['stats', 'ready']));
    expect(Object.fromEntries(counts)).toEqual({
      '0.0.0.0_10000': { active: 4, accepted: 40 },
      '[__]_10001': { active: 2, accepted: 0 },
      'stats-19001': { active: 5, accepted: 0 },
    });
    expect(sumActive(counts)).toBe(11);
  });

  it('matches ignored names exactly, not as substrings', () => {
    // Envoy Gateway's substring match would also skip "stats-19001" and anything containing "admin".
    expect(sumActive(countByListener(stats, new Set(['stats'])))).toBe(4 + 2 + 5 + 2);
    expect(sumActive(countByListener(stats, new Set(['0.0.0.0'])))).toBe(4 + 2 + 1 + 5 + 2);
  });

  it('counts a user listener whose name merely contains "admin" or "worker"', () => {
    const counts = countByListener(
      [
        { name: 'listener.administration.downstream_cx_active', value: 2 },
        { name: 'listener.workers_api.downstream_cx_active', value: 3 },
      ],
      new Set(),
    );
    expect(sumActive(counts)).toBe(5);
  });
});
