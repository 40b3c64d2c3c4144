import { describe, expect, it } from 'vitest';
import { ManagerMetrics } from '../../../src/manager/metrics.js';
import { parsePrometheusText, sampleValue } from '../../support/prometheus.js';

const report = (result: 'drained' | 'timeout' | 'envoy-unreachable', connections: number | null, finishedAt = '2026-11-25T17:00:00.000Z') => ({
  result,
  connections,
  elapsedMs: 4_100,
  exitCode: 0,
  finishedAt,
});

describe('ManagerMetrics', () => {
  it('rises its version with every change to the counters, and not for a drain already counted', () => {
    const metrics = new ManagerMetrics();
    const start = metrics.version;
    metrics.answered('ready', 200);
    metrics.readyFileRelease();
    metrics.drainSeen(report('drained', 0));
    const after = metrics.version;
    expect(after).toBe(start + 3);
    metrics.drainSeen(report('drained', 0));
    metrics.render(0);
    expect(metrics.version).toBe(after);
  });

  it("exports every family from start, each result at 0, and passes Prometheus' parser", async () => {
    const families = await parsePrometheusText(new ManagerMetrics().render(0));
    expect(families.map((family) => `${family.name} ${family.type}`)).toEqual([
      'envoy_shutdown_manager_handshakes counter',
      'envoy_shutdown_manager_waiters gauge',
      'envoy_shutdown_manager_ready_file_releases counter',
      'envoy_shutdown_manager_drains counter',
      'envoy_shutdown_manager_unknown_count_timeouts counter',
      'envoy_shutdown_manager_drain_duration_seconds histogram',
      'envoy_shutdown_manager_released_after_last_connection_seconds histogram',
    ]);
    for (const result of ['drained', 'timeout', 'envoy-unreachable', 'unknown'])
      expect(sampleValue(families, 'envoy_shutdown_manager_drains_total', { result })).toBe(0);
  });

  it('counts each drain once however often its report is seen, and keeps the last one', async () => {
    const metrics = new ManagerMetrics();
    expect(metrics.drainSeen(report('drained', 0))).toBe(true);
    expect(metrics.drainSeen(report('drained', 0))).toBe(false);
    expect(metrics.drainSeen(report('timeout', null, '2026-11-25T17:05:00.000Z'))).toBe(true);
    metrics.answered('ready', 200);
    metrics.answered('ready', 200);
    metrics.answered('drain', 500);
    metrics.readyFileRelease();
    const families = await parsePrometheusText(metrics.render(3));
    expect(sampleValue(families, 'envoy_shutdown_manager_drains_total', { result: 'drained' })).toBe(1);
    expect(sampleValue(families, 'envoy_shutdown_manager_drains_total', { result: 'timeout' })).toBe(1);
    expect(sampleValue(families, 'envoy_shutdown_manager_handshakes_total', { endpoint: 'ready', code: '200' })).toBe(2);
    expect(sampleValue(families, 'envoy_shutdown_manager_handshakes_total', { endpoint: 'drain', code: '500' })).toBe(1);
    expect(sampleValue(families, 'envoy_shutdown_manager_waiters')).toBe(3);
    expect(sampleValue(families, 'envoy_shutdown_manager_ready_file_releases_total')).toBe(1);
    expect(sampleValue(families, 'envoy_shutdown_manager_last_drain_duration_seconds')).toBe(4.1);
    // Unknown is not zero.
    expect(sampleValue(families, 'envoy_shutdown_manager_last_drain_connections')).toBe('NaN');
    expect(sampleValue(families, 'envoy_shutdown_manager_last_drain_end_timestamp_seconds')).toBe(Date.parse('2026-11-25T17:05:00.000Z') / 1000);
  });

  it("observes each drain in its result's duration histogram, how long Envoy was held after its last connection, and timeouts whose count was unknown", async () => {
    const metrics = new ManagerMetrics();
    const finishedAt = '2026-11-25T17:00:00.000Z';
    // Drained at 4.1 s; the count was first seen at 0 at 4.0 s; released 40 ms after the drain ended: held 140 ms.
    metrics.drainSeen({ ...report('drained', 0, finishedAt), lastConnectionMs: 4_000 }, Date.parse(finishedAt) + 40);
    metrics.drainSeen({ ...report('timeout', null, '2026-11-25T17:01:00.000Z'), elapsedMs: 60_000 });
    metrics.drainSeen({ ...report('timeout', 2, '2026-11-25T17:02:00.000Z'), elapsedMs: 60_000 });
    const families = await parsePrometheusText(metrics.render(0));
    const bucket = (name: string, labels: Record<string, string>): unknown => sampleValue(families, `envoy_shutdown_manager_${name}_bucket`, labels);
    expect(bucket('drain_duration_seconds', { result: 'drained', le: '2.5' })).toBe(0);
    expect(bucket('drain_duration_seconds', { result: 'drained', le: '5' })).toBe(1);
    expect(bucket('drain_duration_seconds', { result: 'timeout', le: '45' })).toBe(0);
    expect(bucket('drain_duration_seconds', { result: 'timeout', le: '60' })).toBe(2);
    expect(sampleValue(families, 'envoy_shutdown_manager_drain_duration_seconds_count', { result: 'envoy-unreachable' })).toBe(0);
    expect(bucket('released_after_last_connection_seconds', { le: '0.1' })).toBe(0);
    expect(bucket('released_after_last_connection_seconds', { le: '0.25' })).toBe(1);
    expect(sampleValue(families, 'envoy_shutdown_manager_released_after_last_connection_seconds_sum')).toBe(0.14);
    expect(sampleValue(families, 'envoy_shutdown_manager_unknown_count_timeouts_total')).toBe(1);
    expect(sampleValue(families, 'envoy_shutdown_manager_drains_total', { result: 'timeout' })).toBe(2);
  });

  it('counts a ready file without a report as result unknown', async () => {
    const metrics = new ManagerMetrics();
    metrics.drainSeen('unreadable');
    const families = await parsePrometheusText(metrics.render(0));
    expect(sampleValue(families, 'envoy_shutdown_manager_drains_total', { result: 'unknown' })).toBe(1);
    expect(sampleValue(families, 'envoy_shutdown_manager_last_drain_duration_seconds')).toBeUndefined();
  });
});
