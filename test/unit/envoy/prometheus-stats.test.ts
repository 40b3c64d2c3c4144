import { describe, expect, it } from 'vitest';
import { parsePrometheusStats, parsePrometheusText } from '../../../src/envoy/prometheus-stats.js';
import { withUnused } from '../../../src/envoy/stats-reader.js';
import { AdminError } from '../../../src/shared/errors.js';

// Series as real Envoy 1.40 writes them (see test/e2e/prometheus-names.test.ts for the comparison with its JSON /stats).
const ENVOY_ANSWER = `# TYPE envoy_http_downstream_rq_total counter
envoy_http_downstream_rq_total{envoy_http_conn_manager_prefix="admin"} 2
envoy_http_downstream_rq_total{envoy_http_conn_manager_prefix="ingress_http"} 1
envoy_listener_admin_downstream_cx_total{} 2
envoy_listener_admin_http_downstream_rq_completed{envoy_http_conn_manager_prefix="admin"} 1
envoy_listener_admin_main_thread_downstream_cx_total{} 2
envoy_listener_downstream_cx_total{envoy_listener_address="127.0.0.1_10001"} 1
envoy_listener_http_downstream_rq_completed{envoy_http_conn_manager_prefix="ingress_http",envoy_listener_address="[__1]_10003"} 0
envoy_listener_worker_downstream_cx_total{envoy_worker_id="1",envoy_listener_address="127.0.0.1_10001"} 1
envoy_listener_manager_listener_added{} 3
# TYPE envoy_listener_downstream_cx_active gauge
envoy_listener_downstream_cx_active{envoy_listener_address="127.0.0.1_10001"} 0
envoy_server_total_connections{} 0
envoy_server_uptime{} 12
`;

describe('parsePrometheusStats', () => {
  it("turns Envoy's series back into its stat names, leaving out per-thread copies and the admin API's own", () => {
    expect(parsePrometheusStats(ENVOY_ANSWER)).toEqual({
      stats: [
        { name: 'http.ingress_http.downstream_rq_total', value: 1 },
        { name: 'listener.127.0.0.1_10001.downstream_cx_total', value: 1 },
        { name: 'listener.[__1]_10003.http.ingress_http.downstream_rq_completed', value: 0 },
        { name: 'listener_manager.listener_added', value: 3 },
        { name: 'listener.127.0.0.1_10001.downstream_cx_active', value: 0 },
        { name: 'server.total_connections', value: 0 },
        { name: 'server.uptime', value: 12 },
      ],
      series: 12,
    });
  });

  it.each([
    ["a listener's own dotted stat_prefix", 'envoy_listener_name_downstream_cx_active{envoy_listener_address="custom"} 0'],
    ["a connection manager's prefix with a dot", 'envoy_http_prefix_downstream_rq_total{envoy_http_conn_manager_prefix="dotted"} 1'],
    ['tags turned off (use_all_default_tags: false)', 'envoy_listener_127_0_0_1_10001_downstream_cx_active{} 0'],
    ["a fixed tag of the bootstrap's own", 'envoy_server_uptime{cluster="prod"} 3'],
    ['a tag missing', 'envoy_listener_downstream_cx_active{} 0'],
  ])('reports %s as unreadable, never guessing a name', (_what, line) => {
    expect(parsePrometheusStats(`${line}\n`)).toEqual({ unreadable: expect.stringContaining(line.slice(0, line.indexOf('{'))) as unknown });
  });

  it.each([
    ['a negative count', '-5', /is "-5", not a whole number >= 0/],
    ['a float', '0.5', /is "0\.5"/],
    ['NaN', 'NaN', /is "NaN"/],
    ['infinity', '+Inf', /is "NaN"|not a whole number/],
    ['a quoted value', '"0"', /not a whole number/],
  ])('refuses %s', (_what, value, message) => {
    expect(() => parsePrometheusStats(`envoy_listener_downstream_cx_active{envoy_listener_address="a"} ${value}\n`)).toThrow(message);
  });

  it('refuses a stat that appears twice', () => {
    const line = 'envoy_listener_downstream_cx_active{envoy_listener_address="a"} 1\n';
    expect(() => parsePrometheusStats(line + line)).toThrow(/appears more than once/);
  });
});

describe('parsePrometheusText', () => {
  it('reads escaped label values and skips comments', () => {
    expect(parsePrometheusText('# HELP x\nx{a="q\\"uote\\\\d",b="l\\nine"} 3\n')).toEqual([{ name: 'x', labels: new Map([['a', 'q"uote\\d'], ['b', 'l\nine']]), value: 3 }]);
  });

  it.each([['<html>maintenance</html>'], ['{"stats":[]}'], ['x{a="1" 2'], ['x{a=1} 2'], ['x{a="1",a="2"} 2'], ['x 1 2'], ['x']])('refuses %j as not Prometheus text', (line) => {
    expect(() => parsePrometheusText(line)).toThrow(AdminError);
    expect(() => parsePrometheusText(line)).toThrow(/not a Prometheus sample/);
  });
});

describe('withUnused', () => {
  const baseline = new Map(
    [
      { name: 'listener.a.downstream_cx_active', value: 0 },
      { name: 'listener.a.downstream_cx_total', value: 4 },
      { name: 'listener_manager.listener_added', value: 1 },
    ].map((stat) => [stat.name, stat]),
  );

  it('completes a usedonly read with the stats it left out, at 0', () => {
    expect(withUnused(baseline, [{ name: 'listener.a.downstream_cx_total', value: 5 }, { name: 'listener_manager.listener_added', value: 1 }])).toEqual([
      { name: 'listener.a.downstream_cx_active', value: 0 },
      { name: 'listener.a.downstream_cx_total', value: 5 },
      { name: 'listener_manager.listener_added', value: 1 },
    ]);
  });

  it('gives the full read\'s own stat objects for the stats that stood still', () => {
    const stats = withUnused(baseline, [{ name: 'listener.a.downstream_cx_total', value: 5 }, { name: 'listener_manager.listener_added', value: 1 }]);
    expect(stats?.[0]).toBe(baseline.get('listener.a.downstream_cx_active'));
    expect(stats?.[2]).toBe(baseline.get('listener_manager.listener_added'));
  });

  it.each([
    ['a stat the full read did not have', [{ name: 'listener.b.downstream_cx_active', value: 1 }]],
    ['a stat left out that was not 0', [{ name: 'listener_manager.listener_added', value: 1 }]],
    ['the listener manager updated a listener', [{ name: 'listener.a.downstream_cx_total', value: 4 }, { name: 'listener_manager.listener_added', value: 2 }]],
  ])('cannot: %s', (_what, used) => {
    expect(withUnused(baseline, used)).toBeUndefined();
  });
});
