// The fleet tests' bounds, on timelines written by hand: the overlapping drains of a surge rollout
// pass (the timeline a fast machine gives), a sequential bound is demanded only in place, and each
// broken ordering is named.
import { describe, expect, it } from 'vitest';
import { podTraffic } from '../support/fleet/pod-traffic.js';
import type { RolloutEvent } from '../support/fleet/rollout.js';
import { CHART_STRATEGIES } from '../support/fleet/rollout-plan.js';
import { type RolloutTimeline, rolloutFloor, rolloutViolations } from './support/rollout-physics.js';

const event = (t: number, pod: string, kind: RolloutEvent['kind']): RolloutEvent => ({ t, pod, kind });

/** Four old pods replaced with surge: each deleted once a new pod is ready, drains 1.5-2 s side by side. */
function surge(): RolloutTimeline {
  const events: RolloutEvent[] = [];
  for (let i = 0; i < 4; i += 1) {
    const start = 500 * i;
    events.push(event(start, `new-${i}`, 'created'), event(start, `new-${i}`, 'scheduled'), event(start + 450, `new-${i}`, 'ready'));
    events.push(
      event(start + 495, `old-${i}`, 'deleted'),
      event(start + 500, `old-${i}`, 'terminating'),
      event(start + 2_100, `old-${i}`, 'envoy-hook-returned'),
      event(start + 2_200, `old-${i}`, 'exited'),
    );
  }
  const slots = Object.fromEntries(
    [0, 1, 2, 3].flatMap((i) => [
      [`old-${i}`, i],
      [`new-${i}`, 4 + i],
    ]),
  );
  return {
    replicas: 4,
    strategy: CHART_STRATEGIES.default,
    inPlace: false,
    minDrainMs: 1_500,
    durationMs: 3_800,
    events: events.sort((a, b) => a.t - b.t),
    slots,
  };
}

/** The same in place: each new pod placed on the ports its old pod freed, the next old pod deleted once it is ready. */
function inPlace(): RolloutTimeline {
  const events: RolloutEvent[] = [];
  for (let i = 0; i < 4; i += 1) {
    const start = 2_500 * i;
    events.push(
      event(start, `old-${i}`, 'deleted'),
      event(start + 5, `old-${i}`, 'terminating'),
      event(start + 1_600, `old-${i}`, 'envoy-hook-returned'),
      event(start + 1_700, `old-${i}`, 'exited'),
    );
    events.push(event(start + 1, `new-${i}`, 'created'), event(start + 1_701, `new-${i}`, 'scheduled'), event(start + 2_400, `new-${i}`, 'ready'));
  }
  const slots = Object.fromEntries(
    [0, 1, 2, 3].flatMap((i) => [
      [`old-${i}`, i],
      [`new-${i}`, i],
    ]),
  );
  return {
    replicas: 4,
    strategy: CHART_STRATEGIES.hostNetwork,
    inPlace: true,
    minDrainMs: 1_500,
    durationMs: 9_900,
    events: events.sort((a, b) => a.t - b.t),
    slots,
  };
}

const without = (timeline: RolloutTimeline, drop: (e: RolloutEvent) => boolean, add: RolloutEvent[] = []): RolloutTimeline => ({
  ...timeline,
  events: [...timeline.events.filter((e) => !drop(e)), ...add].sort((a, b) => a.t - b.t),
});

describe('rolloutFloor', () => {
  it('with surge: the last deletion plus one minimum drain, not replicas x the minimum drain', () => {
    const floor = rolloutFloor(surge());
    expect(floor.ms).toBe(1_995 + 1_500);
    expect(floor.ms).toBeLessThan(4 * 1_500);
    expect(floor.why).toMatch(/side by side/);
  });

  it('in place: one minimum drain per wave of maxUnavailable pods', () => {
    expect(rolloutFloor(inPlace())).toMatchObject({ ms: 4 * 1_500, formula: '4 x 1.5 s minimum drain' });
    expect(rolloutFloor({ ...inPlace(), strategy: { maxSurge: 0, maxUnavailable: 2 } }).ms).toBe(2 * 1_500);
  });
});

describe('rolloutViolations', () => {
  it('accepts a surge rollout whose drains overlap, shorter than replicas x the minimum drain', () => {
    expect(rolloutViolations(surge())).toEqual([]);
  });

  it('accepts a sequential rollout in place', () => {
    expect(rolloutViolations(inPlace())).toEqual([]);
  });

  it('names an old pod deleted before a new one was ready (maxUnavailable 0)', () => {
    const early = without(surge(), (e) => e.pod === 'new-1' && e.kind === 'ready', [event(1_200, 'new-1', 'ready')]);
    expect(rolloutViolations(early)).toEqual(['old-1 deleted at 995 ms with 1 new pod(s) ready']);
  });

  it('names a pod that exited before the minimum drain, and a rollout shorter than its floor', () => {
    const quick = without(surge(), (e) => e.pod === 'old-3' && e.kind === 'exited', [event(2_500, 'old-3', 'exited')]);
    expect(rolloutViolations({ ...quick, durationMs: 3_000 })).toEqual([
      'old-3 exited 505 ms after its deletion, under the minimum drain',
      'the rollout took 3000 ms, under its floor of 3495 ms (last deletion at 2.0 s + 1.5 s minimum drain)',
    ]);
  });

  it('in place: names a new pod placed before the old pod on its ports exited', () => {
    const overlap = without(inPlace(), (e) => e.pod === 'new-2' && e.kind === 'scheduled', [event(5_100, 'new-2', 'scheduled')]);
    expect(rolloutViolations(overlap)).toEqual(['new-2 placed at 5100 ms on slot 2 before any old pod there exited']);
  });

  it('names an old pod that never exited', () => {
    expect(rolloutViolations(without(inPlace(), (e) => e.pod === 'old-0' && e.kind === 'exited'))).toContain('old-0 never exited');
  });
});

describe('podTraffic', () => {
  it('gives a shared slot to the old pod until it exited and to the new one from when it was ready', () => {
    const timeline = { startedAt: 1_000_000, ...inPlace() };
    const arrivals = new Map([['pod0', [999_000, 1_000_010, 1_001_000, 1_001_650, 1_002_000, 1_002_500]]]);
    const traffic = podTraffic(timeline, arrivals);
    // old-0: before the rollout, at 10, 1000 ms (terminating from 5 to the hook's return at 1600); new-0: ready at 2400.
    expect(traffic['old-0']).toEqual({ served: 4, whileTerminating: 2 });
    expect(traffic['new-0']).toEqual({ served: 1, whileTerminating: undefined });
    expect(traffic['old-1']).toEqual({ served: 0, whileTerminating: 0 });
  });
});
