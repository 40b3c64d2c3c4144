import { describe, expect, it } from 'vitest';
import { ManagerMetrics } from '../../../src/manager/metrics.js';
import { parsePrometheusText, sampleValue } from '../../support/prometheus.js';

const report = (result: 'drained' | 'timeout' | 'envoy-unreachable', connections: number | null, finishedAt = '2026-11-25T17:00:00.000Z') => ({ result, connections, elapsedMs: 4_100, exitCode: 0, finishedAt });

describe('ManagerMetrics', () => {
  it("exports every family from start, each result at 0, and passes Prometheus' parser", async () => {
    const families = await parsePrometheusText(new ManagerMetrics().render(0));
    expect(families.map((family) => `${family.name} ${family.type}`)).toEqual([
      'envoy_shutdown_manager_handshakes counter',
      'envoy_shutdown_manager_waiters gauge',
      'envoy_shutdown_manager_ready_file_releases counter',
      'envoy_shutdown_manager_drains counter',
    ]);
    for (const result of ['drained', 'timeout', 'envoy-unreachable', 'unknown']) expect(sampleValue(families, 'envoy_shutdown_manager_drains_total', { result })).toBe(0);
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

  it('counts a ready file without a report as result unknown', async () => {
    const metrics = new ManagerMetrics();
    metrics.drainSeen('unreadable');
    const families = await parsePrometheusText(metrics.render(0));
    expect(sampleValue(families, 'envoy_shutdown_manager_drains_total', { result: 'unknown' })).toBe(1);
    expect(sampleValue(families, 'envoy_shutdown_manager_last_drain_duration_seconds')).toBeUndefined();
  });
});
