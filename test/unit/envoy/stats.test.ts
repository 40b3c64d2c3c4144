import { describe, expect, it } from 'vitest';
import { AdminError } from '../../../src/shared/errors.js';
import { countByListener, parseStatsJson, sumAccepted, sumActive, totalConnections, type Stat } from '../../../src/envoy/stats.js';

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

  // Envoy's gauges and counters are unsigned integers: any other value of a counted stat is not
  // Envoy's answer, and reading it as a number (or as 0) would be a guess.
  it.each([
    ['a string', '"3"'],
    ['null', 'null'],
    ['a float', '0.5'],
    ['Infinity (1e999)', '1e999'],
    ['a negative count', '-5'],
    ['an unsigned wrap-around', '18446744073709551615'],
    ['a missing value', undefined],
  ])('rejects %s as the value of a counted stat', (_what, value) => {
    for (const name of ['server.total_connections', 'listener.ingress.downstream_cx_active', 'listener.ingress.downstream_cx_total']) {
      const body = `{"stats":[{"name":"${name}"${value === undefined ? '' : `,"value":${value}`}}]}`;
      expect(() => parseStatsJson(body)).toThrow(/not a whole number >= 0/);
    }
  });

  it('rejects a counted stat that appears twice, whatever the values', () => {
    const body = JSON.stringify({ stats: [{ name: 'listener.ingress.downstream_cx_active', value: 0 }, { name: 'listener.ingress.downstream_cx_active', value: 3 }] });
    expect(() => parseStatsJson(body)).toThrow(/listener\.ingress\.downstream_cx_active appears more than once/);
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
      '[__]_10001': { active: 2, accepted: undefined },
      'stats-19001': { active: 5, accepted: undefined },
    });
    expect(sumActive(counts)).toBe(11);
    // Quiet-period judgement needs every counted listener's counter: one missing is unknown, not 0.
    expect(() => sumAccepted(counts)).toThrow(/no listener\.\[__\]_10001\.downstream_cx_total counter/);
  });

  it('matches ignored names exactly, not as substrings', () => {
    // Envoy Gateway's substring match would also skip "stats-19001" and anything containing "admin".
    expect(sumActive(countByListener(stats, new Set(['stats'])))).toBe(4 + 2 + 5 + 2);
    expect(sumActive(countByListener(stats, new Set(['0.0.0.0'])))).toBe(4 + 2 + 1 + 5 + 2);
  });

  it('fails, naming the stats_matcher, when no data-plane listener gauge is there at all', () => {
    const onlyAdmin: Stat[] = [{ name: 'listener.admin.downstream_cx_active', value: 1 }];
    for (const input of [[], onlyAdmin]) expect(() => countByListener(input, new Set())).toThrow(/no listener\.<name>\.downstream_cx_active gauges.*stats_matcher/);
  });

  it('fails when a counted listener has its counter but not its live gauge', () => {
    const counts = countByListener([{ name: 'listener.ingress.downstream_cx_total', value: 7 }], new Set());
    expect(() => sumActive(counts)).toThrow(/no listener\.ingress\.downstream_cx_active gauge/);
  });

  it('reads 0 when every listener is ignored on purpose', () => {
    expect(sumActive(countByListener([{ name: 'listener.stats.downstream_cx_active', value: 2 }], new Set(['stats'])))).toBe(0);
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
