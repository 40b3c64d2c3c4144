// The fleet tests' numbers, in one place for the tests, the demo and the README.
import { resolve } from 'node:path';
import { DEFAULT_ROLLOUT_TIMEOUT_MS, type FleetInput, type FleetOutput } from './fleet-run.js';
import type { HealthCheck } from './haproxy-config.js';
import { runInPrivateNetns } from './netns.js';

/**
 * The test's checks: Google Cloud's default health check (Cloud Load Balancing, "Health checks
 * overview": every 5 s, 5 s timeout, healthy after 2 good checks, unhealthy after 2 failed ones)
 * with its interval divided by 20, so a rollout takes seconds. AWS's Application Load Balancer
 * target groups default to 30 s, 5 s timeout, healthy 5, unhealthy 2. The timeout is 1 s, not
 * 250 ms: a healthy pod on a busy two-core machine must not fail a check by being slow (a draining
 * one answers 503 at once, so it changes nothing there).
 */
export const TEST_CHECK: HealthCheck = { intervalMs: 250, timeoutMs: 1_000, rise: 2, fall: 2 };

export const REPLICAS = 4;
/** The chart's shutdown.minDrainDuration in the test: above fall x interval (0.5 s) with room to spare. */
export const MIN_DRAIN_S = 1.5;
/** Endpoints mode: the balancer takes a terminating pod out this long after its deletion (kube-proxy's order). */
export const REMOVE_LAG_MS = 200;
/** Long requests the application holds this long, put in flight before each deletion. */
export const LONG_REQUEST_MS = 1_000;
/** Bounds one fleet run, pods' start-up included. */
export const RUN_TIMEOUT_MS = 170_000;

/** The fleet runner's bundle (../fixtures.ts builds it, and the network-namespace bridge beside it). */
export const FLEET_RUNNER = resolve('test/.build/fleet-main.cjs');

export type FleetCase = Pick<FleetInput, 'mode' | 'network' | 'hooks' | 'scrapeIntervalMs'>;

export function runFleetCase(fleetCase: FleetCase, context: Pick<FleetInput, 'images' | 'runId' | 'heyBinary'>): Promise<FleetOutput> {
  // A manager staying for its final scrape keeps its pod up to one scrape interval longer; in place, one pod after another.
  const stays = (fleetCase.scrapeIntervalMs ?? 0) * (REPLICAS + 2);
  const input: FleetInput = {
    ...fleetCase,
    ...context,
    replicas: REPLICAS,
    minDrainSeconds: MIN_DRAIN_S,
    healthCheck: TEST_CHECK,
    removeLagMs: REMOVE_LAG_MS,
    longRequestMs: LONG_REQUEST_MS,
    ...(stays === 0 ? {} : { rolloutTimeoutMs: DEFAULT_ROLLOUT_TIMEOUT_MS + stays }),
  };
  return runInPrivateNetns<FleetOutput>(FLEET_RUNNER, input, RUN_TIMEOUT_MS + stays);
}
