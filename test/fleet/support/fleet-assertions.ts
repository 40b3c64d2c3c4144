// What a fleet run must show, shared by the two balancer modes' tests: with the hooks every client
// and HAProxy counted zero errors; without them (the control) something was lost. Only what holds
// on any machine is asserted: orderings and lower bounds the rollout's rules and the minimum drain
// guarantee (rollout-physics.ts), and traffic that reached each pod, never a total that depends on
// how long the rollout happened to take.
import { expect } from 'vitest';
import { errorCount } from '../../support/fleet/error-count.js';
import type { FleetOutput } from '../../support/fleet/fleet-run.js';
import { LONG_REQUEST_MS, MIN_DRAIN_S, REPLICAS } from '../../support/fleet/fleet-settings.js';
import { fleetTimeline, rolloutFloor, rolloutViolations } from './rollout-physics.js';

/** One line for the test log and the README's numbers. */
export function summary(out: FleetOutput): string {
  const drains = out.rollout.drains.map((d) => `${d.pod} hook ${d.hookMs ?? '-'} ms exit ${d.exitMs} ms`).join(', ');
  const letGo = Object.entries(out.balancerLetGoMs)
    .map(([pod, ms]) => `${pod} ${ms ?? 'never'}`)
    .join(', ');
  const served = Object.entries(out.podTraffic)
    .map(([pod, t]) => `${pod} ${t.served}${t.whileTerminating === undefined ? '' : ` (${t.whileTerminating} terminating)`}`)
    .join(', ');
  const floor = rolloutFloor(fleetTimeline(out));
  const bound = out.input.hooks ? ` (floor ${floor.ms} ms: ${floor.formula})` : '';
  return `${out.input.mode} ${out.input.network} hooks=${out.input.hooks}: rollout ${out.rollout.durationMs} ms${bound}; hey ${out.hey.responses} responses, ${out.hey.failed} failed ${JSON.stringify(out.hey.errors)}; http1 ${out.clients.http1.succeeded}/${out.clients.http1.failures.length} failed; http2 ${out.clients.http2.succeeded}/${out.clients.http2.failures.length} failed; long ${out.longRequests.sent}/${out.longRequests.failures.length} failed; haproxy ${JSON.stringify(out.haproxy.totals)}; balancer let go: ${letGo}; served: ${served}; drains: ${drains}`;
}

export function expectZeroErrors(out: FleetOutput): void {
  expect(out.hey.errors).toEqual({});
  expect(Object.keys(out.hey.statuses)).toEqual(['200']);
  expect(out.clients.http1.failures).toEqual([]);
  expect(out.clients.http2.failures).toEqual([]);
  expect(out.longRequests.failures).toEqual([]);
  expect(out.haproxy.totals).toEqual({ econ: 0, eresp: 0, wretr: 0, wredis: 0, srvAbrt: 0, frontend5xx: 0 });
  expect(errorCount(out)).toBe(0);
  // Every tool's requests were answered.
  expect(out.hey.responses).toBeGreaterThan(0);
  expect(out.clients.http1.succeeded).toBeGreaterThan(0);
  expect(out.clients.http2.succeeded).toBeGreaterThan(0);
  // Long requests on both protocols at each of the REPLICAS deletions, each held LONG_REQUEST_MS by the application.
  expect(out.longRequests.sent).toBe(REPLICAS * REPLICAS * 2);
  expect(out.idleConnections.closedByServer).toBe(0);
  // Traffic reached every pod, old and new, and each old pod served requests while it terminated:
  // the balancer can only let go after the drain began (failed checks) or after its lag.
  expect(Object.keys(out.podTraffic)).toHaveLength(2 * REPLICAS);
  for (const [pod, traffic] of Object.entries(out.podTraffic)) {
    expect(traffic.served, `${pod} served nothing`).toBeGreaterThan(0);
    if (pod.startsWith('old-')) expect(traffic.whileTerminating, `${pod} served nothing while it terminated`).toBeGreaterThan(0);
  }
  // Every old pod drained at least the minimum, was let go by HAProxy before its drain ended (the
  // drain cannot go quiet while the balancer still sends it requests), and exited 0.
  expect(out.rollout.drains).toHaveLength(REPLICAS);
  const at = (pod: string, kind: string): number => out.rollout.events.find((e) => e.pod === pod && e.kind === kind)?.t ?? NaN;
  for (const drain of out.rollout.drains) {
    // Envoy's hook reached the manager (with hostNetwork, through the host it names) and was answered.
    expect(drain.envoyHook).toMatch(/^httpGet \d{3}$/);
    expect(drain.hookMs).toBeGreaterThanOrEqual(MIN_DRAIN_S * 1_000);
    expect(drain.exitCodes).toEqual({ envoy: 0, 'shutdown-manager': 0 });
    const letGo = out.balancerLetGoMs[drain.pod];
    expect(letGo, `${drain.pod}: HAProxy never took it out`).not.toBeNull();
    expect(letGo).toBeLessThan(at(drain.pod, 'envoy-hook-returned') - at(drain.pod, 'deleted'));
  }
  // The rollout's orderings and its floor for its strategy.
  expect(rolloutViolations(fleetTimeline(out))).toEqual([]);
  expect(LONG_REQUEST_MS).toBeLessThan(MIN_DRAIN_S * 1_000);
}

export function expectLosses(out: FleetOutput): void {
  expect(out.rollout.drains.every((d) => d.hookMs === undefined)).toBe(true);
  expect(errorCount(out)).toBeGreaterThan(0);
}
