// The Deployment controller's rolling-update decision, table by table, and whole rollouts simulated
// with it: never more pods than replicas + maxSurge, never fewer ready than replicas - maxUnavailable.
import { describe, expect, it } from 'vitest';
import { CHART_STRATEGIES, nextStep, type RolloutState, type Strategy } from '../support/fleet/rollout-plan.js';

const state = (oldTotal: number, oldReady: number, freshTotal: number, freshReady: number): RolloutState => ({
  replicas: 4,
  old: { total: oldTotal, ready: oldReady },
  fresh: { total: freshTotal, ready: freshReady },
});

describe('nextStep', () => {
  it.each([
    ['default: surge one first', CHART_STRATEGIES.default, state(4, 4, 0, 0), { create: 1, delete: 0, done: false }],
    ['default: wait while the new pod starts', CHART_STRATEGIES.default, state(4, 4, 1, 0), { create: 0, delete: 0, done: false }],
    ['default: delete one once it is ready', CHART_STRATEGIES.default, state(4, 4, 1, 1), { create: 0, delete: 1, done: false }],
    ['default: then surge the next', CHART_STRATEGIES.default, state(3, 3, 1, 1), { create: 1, delete: 0, done: false }],
    ['hostNetwork: delete one first', CHART_STRATEGIES.hostNetwork, state(4, 4, 0, 0), { create: 0, delete: 1, done: false }],
    ['hostNetwork: its successor at once', CHART_STRATEGIES.hostNetwork, state(3, 3, 0, 0), { create: 1, delete: 0, done: false }],
    ['hostNetwork: wait while it starts', CHART_STRATEGIES.hostNetwork, state(3, 3, 1, 0), { create: 0, delete: 0, done: false }],
    ['done', CHART_STRATEGIES.default, state(0, 0, 4, 4), { create: 0, delete: 0, done: true }],
  ] as const)('%s', (_name, strategy, given, expected) => {
    expect(nextStep(given, strategy)).toEqual(expected);
  });

  it('refuses a strategy that can never progress', () => {
    expect(() => nextStep(state(4, 4, 0, 0), { maxSurge: 0, maxUnavailable: 0 })).toThrow(/cannot both be 0/);
  });

  it.each([
    ['default', CHART_STRATEGIES.default],
    ['hostNetwork', CHART_STRATEGIES.hostNetwork],
    ['surge 2, unavailable 1', { maxSurge: 2, maxUnavailable: 1 }],
  ] as const)('%s: a whole rollout keeps within the bounds and ends', (_name, strategy: Strategy) => {
    let old = 4;
    let starting = 0;
    let ready = 0;
    for (let round = 0; round < 50; round += 1) {
      const step = nextStep({ replicas: 4, old: { total: old, ready: old }, fresh: { total: starting + ready, ready } }, strategy);
      if (step.done) return;
      old -= step.delete;
      starting += step.create;
      expect(old + starting + ready).toBeLessThanOrEqual(4 + strategy.maxSurge);
      expect(old + ready).toBeGreaterThanOrEqual(4 - strategy.maxUnavailable);
      // Nothing to do now: the pods being started turn ready.
      if (step.create === 0 && step.delete === 0) [ready, starting] = [ready + starting, 0];
    }
    throw new Error('the rollout never ended');
  });
});
