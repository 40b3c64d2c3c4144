// What a fleet run must show, shared by the two balancer modes' tests: with the hooks every client
// and HAProxy counted zero errors; without them (the control) something was lost.
import { expect } from 'vitest';
import { errorCount } from './error-count.js';
import type { FleetOutput } from './fleet-run.js';
import { LONG_REQUEST_MS, MIN_DRAIN_S, REPLICAS } from './fleet-settings.js';

/** One line for the test log and the README's numbers. */
export function summary(out: FleetOutput): string {
  const drains = out.rollout.drains.map((d) => `${d.pod} hook ${d.hookMs ?? '-'} ms exit ${d.exitMs} ms`).join(', ');
  const letGo = Object.entries(out.balancerLetGoMs).map(([pod, ms]) => `${pod} ${ms ?? 'never'}`).join(', ');
  return `${out.input.mode} ${out.input.network} hooks=${out.input.hooks}: rollout ${out.rollout.durationMs} ms (floor ${out.floorMs} ms); hey ${out.hey.responses} responses, ${out.hey.failed} failed ${JSON.stringify(out.hey.errors)}; http1 ${out.clients.http1.succeeded}/${out.clients.http1.failures.length} failed; http2 ${out.clients.http2.succeeded}/${out.clients.http2.failures.length} failed; long ${out.longRequests.sent}/${out.longRequests.failures.length} failed; haproxy ${JSON.stringify(out.haproxy.totals)}; balancer let go: ${letGo}; drains: ${drains}`;
}

export function expectZeroErrors(out: FleetOutput): void {
  expect(out.hey.errors).toEqual({});
  expect(Object.keys(out.hey.statuses)).toEqual(['200']);
  expect(out.clients.http1.failures).toEqual([]);
  expect(out.clients.http2.failures).toEqual([]);
  expect(out.longRequests.failures).toEqual([]);
  expect(out.haproxy.totals).toEqual({ econ: 0, eresp: 0, wretr: 0, wredis: 0, srvAbrt: 0, frontend5xx: 0 });
  expect(errorCount(out)).toBe(0);
  // Traffic really went through every tool and every pod, old and new.
  expect(out.hey.responses).toBeGreaterThan(1_000);
  expect(out.clients.http1.succeeded).toBeGreaterThan(100);
  expect(out.clients.http2.succeeded).toBeGreaterThan(100);
  expect(out.haproxy.servers.filter((s) => s.backend === 'pods_h1').length).toBeGreaterThanOrEqual(REPLICAS);
  // Long requests on both protocols at each of the REPLICAS deletions, each held LONG_REQUEST_MS by the application.
  expect(out.longRequests.sent).toBe(REPLICAS * REPLICAS * 2);
  expect(out.idleConnections.closedByServer).toBe(0);
  // Every old pod drained at least the minimum, was let go by HAProxy before its drain ended, and exited 0.
  expect(out.rollout.drains).toHaveLength(REPLICAS);
  for (const drain of out.rollout.drains) {
    expect(drain.hookMs).toBeGreaterThanOrEqual(MIN_DRAIN_S * 1_000);
    expect(drain.exitCodes).toEqual({ envoy: 0, 'shutdown-manager': 0 });
    const letGo = out.balancerLetGoMs[drain.pod];
    expect(letGo, `${drain.pod}: HAProxy never took it out`).not.toBeNull();
    expect(letGo).toBeLessThan(drain.hookMs ?? 0);
  }
  expect(out.rollout.durationMs).toBeGreaterThanOrEqual(out.floorMs);
  expect(LONG_REQUEST_MS).toBeLessThan(MIN_DRAIN_S * 1_000);
}

export function expectLosses(out: FleetOutput): void {
  expect(out.rollout.drains.every((d) => d.hookMs === undefined)).toBe(true);
  expect(errorCount(out)).toBeGreaterThan(0);
}
