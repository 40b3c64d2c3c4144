import { describe, expect, it } from 'vitest';
import type { StatRecord } from '../../../src/envoy/stat-names.js';
import { AMBIGUOUS, parseCount, type StatsFormat, statsAnswer } from '../../../src/envoy/stats-answer.js';
import { AdminError } from '../../../src/shared/errors.js';
import { ENVOY_ANSWER, FULL_PROMETHEUS, FULL_TEXT } from '../support/envoy-answers.js';

function read(format: StatsFormat, body: string): ReturnType<ReturnType<typeof statsAnswer>['finish']> {
  const answer = statsAnswer(format);
  for (const line of body.split('\n')) answer.line(line);
  return answer.finish();
}

function records(format: StatsFormat, body: string): StatRecord[] {
  const result = read(format, body);
  if (!('records' in result)) throw new Error(result.unreadable);
  return result.records;
}

const byKey = (list: readonly StatRecord[]): StatRecord[] =>
  [...list].sort((a, b) => `${a.kind} ${a.listener} ${a.manager}`.localeCompare(`${b.kind} ${b.listener} ${b.manager}`));

const record = (kind: StatRecord['kind'], listener: string, manager: string, value: number): StatRecord => ({ kind, listener, manager, value });

describe('parseCount', () => {
  it.each(['0', '7', '1234567890', String(Number.MAX_SAFE_INTEGER)])('reads %s', (text) => {
    expect(parseCount(text, 'x')).toBe(Number(text));
  });

  // Number() reads all of these, and some as 0: none is how Envoy writes a count.
  it.each(['0x0', '0b0', '0o0', '0e0', '1e3', '0.0', '+0', '-0', ' 0', '0 ', 'NaN', 'Inf', '+Inf', '00', '01', '', '"0"'])('refuses %j', (text) => {
    expect(() => parseCount(text, 'listener.a.downstream_cx_active')).toThrow(
      `listener.a.downstream_cx_active is ${JSON.stringify(text)}, not a whole number >= 0`,
    );
  });

  it.each([
    ['2^53 + 1, which a number cannot hold exactly', '9007199254740993'],
    ['a gauge gone below 0 in 64 bits', '18446744073709551615'],
  ])('refuses %s', (_what, text) => {
    expect(() => parseCount(text, 'server.total_connections')).toThrow(new RegExp(`server\\.total_connections is "${text}"`));
  });

  it('fails as a malformed answer, never as Envoy gone', () => {
    const error = (() => {
      try {
        return parseCount('-1', 'x');
      } catch (thrown) {
        return thrown;
      }
    })();
    expect(error).toBeInstanceOf(AdminError);
    expect(error).toMatchObject({ code: 'ESM_ADMIN_BAD_RESPONSE', permanent: false });
  });
});

describe('the Prometheus answer', () => {
  it("reads Envoy's series by their labels, leaving out per-thread copies and the admin API's own", () => {
    expect(records('prometheus', ENVOY_ANSWER)).toEqual([
      record('rq_total', '', 'ingress_http', 1),
      record('cx_total', '127.0.0.1_10001', '', 1),
      record('rq_completed', '[__1]_10003', 'ingress_http', 0),
      record('listener_update', '', '', 3),
      record('cx_active', '127.0.0.1_10001', '', 0),
      record('total_connections', '', '', 0),
      record('uptime', '', '', 12),
    ]);
  });

  it('reads what the text /stats says of the same Envoy', () => {
    expect(byKey(records('prometheus', FULL_PROMETHEUS))).toEqual(byKey(records('text', FULL_TEXT)));
    expect(records('prometheus', FULL_PROMETHEUS)).toContainEqual(record('cx_active', 'stats-listener', '', 0));
  });

  it.each([
    ["a listener's own dotted stat_prefix", 'envoy_listener_ingress_downstream_cx_active{envoy_listener_address="team"} 0'],
    ["a connection manager's prefix with a dot", 'envoy_http_b_downstream_rq_total{envoy_http_conn_manager_prefix="a"} 1'],
    ['tags turned off (use_all_default_tags: false)', 'envoy_listener_127_0_0_1_10001_downstream_cx_active{} 0'],
    ["a fixed tag of the bootstrap's own", 'envoy_server_uptime{cluster="prod"} 3'],
    ['an extra tag on a labelled series', 'envoy_listener_downstream_cx_active{envoy_listener_address="a",zone="z"} 0'],
    ['a label missing', 'envoy_listener_downstream_cx_active{} 0'],
    ['the other label instead', 'envoy_listener_downstream_cx_active{envoy_http_conn_manager_prefix="a"} 0'],
  ])('reports %s as unreadable, never guessing a name', (_what, line) => {
    const series = line.slice(0, line.lastIndexOf(' '));
    expect(read('prometheus', `envoy_server_uptime{} 1\n${line}\nenvoy_server_total_connections{} 0\n`)).toEqual({
      unreadable: expect.stringContaining(`/stats/prometheus names ${series}, which`) as unknown,
    });
  });

  it('reads escaped label values', () => {
    expect(records('prometheus', 'envoy_listener_downstream_cx_active{envoy_listener_address="q\\"uote\\\\d\\nl"} 3\n')).toEqual([
      record('cx_active', 'q"uote\\d\nl', '', 3),
    ]);
  });

  it.each([
    ['<html>maintenance</html>'],
    ['{"stats":[]}'],
    ['x{a="1" 2'],
    ['x{a=1} 2'],
    ['x{a="1",a="2"} 2'],
    ['x{a="1",} 2'],
    ['x 1 2'],
    ['x'],
    ['envoy_server_uptime{}  1'],
    ['envoy_server_uptime{} 1 '],
  ])('refuses %j as not a Prometheus sample', (line) => {
    expect(() => read('prometheus', line)).toThrow(AdminError);
    expect(() => read('prometheus', line)).toThrow(/not a Prometheus sample/);
  });

  it.each(['-5', '0.5', 'NaN', '+Inf', '1e3', '0x1'])('refuses the count %s', (value) => {
    expect(() => read('prometheus', `envoy_listener_downstream_cx_active{envoy_listener_address="a"} ${value}\n`)).toThrow(
      `envoy_listener_downstream_cx_active{envoy_listener_address="a"} is "${value}", not a whole number >= 0 as Envoy writes one`,
    );
  });
});

describe('an answer over its bound', () => {
  it.each<StatsFormat>(['prometheus', 'text'])('lets go of what it read (%s)', (format) => {
    const answer = statsAnswer(format);
    answer.line(format === 'prometheus' ? 'envoy_listener_downstream_cx_active{envoy_listener_address="a"} 1' : 'listener.a.downstream_cx_active: 1');
    answer.line(
      format === 'prometheus'
        ? 'envoy_listener_http_downstream_rq_completed{envoy_http_conn_manager_prefix="h",envoy_listener_address="a"} 1'
        : 'listener.a.http.h.downstream_rq_completed: 1',
    );
    answer.discard();
    expect(answer.finish()).toEqual({ records: [] });
  });
});

describe('the text /stats answer', () => {
  it("reads Envoy's own names, dots in listeners and connection managers included", () => {
    const body = [
      'http.a.b.downstream_cx_active: 2',
      'http.a.b.downstream_rq_active: 1',
      'http.a.b.downstream_rq_total: 9',
      'listener.0.0.0.0_10000.downstream_cx_active: 2',
      'listener.0.0.0.0_10000.downstream_cx_total: 5',
      'listener.0.0.0.0_10000.http.a.b.downstream_rq_completed: 8',
      'listener.team.ingress.downstream_cx_active: 0',
      'listener.team.ingress.http.a.b.downstream_rq_completed: 0',
      'listener_manager.listener_modified: 2',
      'server.total_connections: 3',
      'server.uptime: 40',
    ];
    // Each line's record, as `kind listener|manager`: the same order.
    expect(records('text', body.join('\n')).map((r) => `${r.kind} ${r.listener}|${r.manager} ${r.value}`)).toEqual([
      'http_cx_active |a.b 2',
      'rq_active |a.b 1',
      'rq_total |a.b 9',
      'cx_active 0.0.0.0_10000| 2',
      'cx_total 0.0.0.0_10000| 5',
      'cx_active team.ingress| 0',
      'listener_update | 2',
      'total_connections | 3',
      'uptime | 40',
      // Pairing names last: split once every listener is read.
      'rq_completed 0.0.0.0_10000|a.b 8',
      'rq_completed team.ingress|a.b 0',
    ]);
  });

  it("leaves out per-thread copies, the admin API's own stats and every stat no count reads", () => {
    const body = [
      'listener.admin.downstream_cx_active: 1',
      'listener.admin.main_thread.downstream_cx_active: 1',
      'listener.admin.http.admin.downstream_rq_completed: 4',
      'http.admin.downstream_rq_total: 4',
      'listener.l.worker_0.downstream_cx_active: 3',
      'listener.l.worker_1.downstream_cx_total: 4',
      'listener.l.downstream_cx_active: 3',
      'cluster.backend.upstream_cx_active: 7',
      'http.l.downstream_rq_time: P0(nan,0) P25(nan,0) P50(nan,0)',
      'listener_manager.total_listeners_active: 2',
      'server.version: 1.40.0',
    ].join('\n');
    expect(records('text', body)).toEqual([record('cx_active', 'l', '', 3)]);
  });

  it('counts a user listener whose name merely contains "admin" or "worker"', () => {
    const body = [
      'listener.administration.downstream_cx_active: 2',
      'listener.workers_api.downstream_cx_active: 3',
      'listener.api.worker_x.downstream_cx_active: 4',
    ].join('\n');
    expect(records('text', body).map((r) => r.listener)).toEqual(['administration', 'workers_api', 'api.worker_x']);
  });

  it('splits a pairing name at the listener read, whichever line came first', () => {
    const pairing = 'listener.a.http.b.http.c.downstream_rq_completed: 0';
    const pairs = (listeners: string[]): StatRecord[] =>
      records('text', [pairing, ...listeners.map((l) => `listener.${l}.downstream_cx_active: 0`)].join('\n')).filter((r) => r.kind === 'rq_completed');
    expect(pairs(['a'])).toEqual([record('rq_completed', 'a', 'b.http.c', 0)]);
    expect(pairs(['a.http.b'])).toEqual([record('rq_completed', 'a.http.b', 'c', 0)]);
    // No listener read names it: no pairing stat at all.
    expect(pairs(['x'])).toEqual([]);
  });

  it('pairs both listeners with no manager for certain when a name splits at either', () => {
    const body = [
      'listener.a.downstream_cx_active: 1',
      'listener.a.http.b.downstream_cx_active: 1',
      'listener.a.http.b.http.c.downstream_rq_completed: 1',
    ].join('\n');
    expect(records('text', body).filter((r) => r.kind === 'rq_completed')).toEqual([
      record('rq_completed', 'a', AMBIGUOUS, 1),
      record('rq_completed', 'a.http.b', AMBIGUOUS, 1),
    ]);
  });

  it.each(['listener.a.downstream_cx_active 1', '<html>maintenance</html>', '{"stats":[]}'])('refuses %j as not `name: value`', (line) => {
    expect(() => read('text', line)).toThrow(/not `name: value`/);
  });

  it.each(['-5', '0.5', 'NaN', ' 0', '0 ', '01', '1e3'])('refuses the count %j', (value) => {
    expect(() => read('text', `listener.a.downstream_cx_active: ${value}`)).toThrow(
      `listener.a.downstream_cx_active is ${JSON.stringify(value)}, not a whole number >= 0`,
    );
  });
});
