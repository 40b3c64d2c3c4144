// The fake Prometheus answers are held to real Envoy's: a fake that named series otherwise would
// test the reader against itself.
import { describe, expect, it } from 'vitest';
import { FULL_PROMETHEUS, FULL_TEXT } from './envoy-answers.js';
import { seriesOf } from './prometheus-text.js';

const lines = (body: string): string[] => body.split('\n').filter((line) => line !== '' && !line.startsWith('#'));

describe('seriesOf', () => {
  it("names every stat of a real full answer as Envoy's Prometheus endpoint did", () => {
    const fromText = lines(FULL_TEXT).map((line) => seriesOf(line.slice(0, line.lastIndexOf(': '))));
    const fromEnvoy = lines(FULL_PROMETHEUS).map((line) => line.slice(0, line.lastIndexOf(' ')));
    expect(fromText.sort()).toEqual(fromEnvoy.sort());
  });

  // Each as real Envoy 1.40 named it.
  it.each([
    ['listener.team.ingress.downstream_cx_total', 'envoy_listener_ingress_downstream_cx_total{envoy_listener_address="team"}'],
    [
      'listener.team.ingress.http.a.b.downstream_rq_completed',
      'envoy_listener_ingress_http_b_downstream_rq_completed{envoy_http_conn_manager_prefix="a",envoy_listener_address="team"}',
    ],
    ['http.a.b.downstream_rq_total', 'envoy_http_b_downstream_rq_total{envoy_http_conn_manager_prefix="a"}'],
    [
      'listener.127.0.0.1_0.worker_0.downstream_cx_total',
      'envoy_listener_worker_downstream_cx_total{envoy_worker_id="0",envoy_listener_address="127.0.0.1_0"}',
    ],
    ['listener.admin.main_thread.downstream_cx_active', 'envoy_listener_admin_main_thread_downstream_cx_active{}'],
  ])('names %s as Envoy does', (name, series) => {
    expect(seriesOf(name)).toBe(series);
  });
});
