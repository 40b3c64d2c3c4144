// What a rolling update guarantees whatever the machine's speed, as pure functions of its timeline.
// Only orderings and lower bounds that follow from the controller's rules and the minimum drain
// are checked: how fast pods start, or how many requests fit in a rollout, is the machine's business.
//
// With surge (maxSurge > 0) the controller deletes the next old pod as soon as enough new pods are
// ready, not when the previous old pod has exited, so old pods drain side by side and the rollout
// is bounded only by its last deletion plus one minimum drain. In place (hostNetwork: each new pod
// needs the node ports an old pod frees when it exits) at most maxUnavailable pods terminate at
// once, so the terminations come in waves and each wave lasts at least the minimum drain.
import type { FleetOutput } from '../../support/fleet/fleet-run.js';
import type { RolloutEvent } from '../../support/fleet/rollout.js';
import type { Strategy } from '../../support/fleet/rollout-plan.js';

export interface RolloutTimeline {
  readonly replicas: number;
  readonly strategy: Strategy;
  readonly inPlace: boolean;
  readonly minDrainMs: number;
  readonly durationMs: number;
  readonly events: readonly RolloutEvent[];
  /** Each pod's server slot (in place, a new pod takes a slot an old pod freed). */
  readonly slots: Readonly<Record<string, number>>;
}

export interface RolloutFloor {
  readonly ms: number;
  /** The bound as a sum, e.g. `4 x 1.5 s minimum drain`. */
  readonly formula: string;
  /** One line: why the terminations overlap, or why they cannot. */
  readonly why: string;
}

export function fleetTimeline(out: FleetOutput): RolloutTimeline {
  const { durationMs, events, slots } = out.rollout;
  return {
    replicas: out.input.replicas,
    strategy: out.strategy,
    inPlace: out.inPlace,
    minDrainMs: out.input.minDrainSeconds * 1_000,
    durationMs,
    events,
    slots,
  };
}

/** The shortest the rollout can physically last. */
export function rolloutFloor(timeline: RolloutTimeline): RolloutFloor {
  const drain = `${timeline.minDrainMs / 1_000} s minimum drain`;
  if (timeline.inPlace) {
    const waves = Math.ceil(timeline.replicas / timeline.strategy.maxUnavailable);
    return {
      ms: waves * timeline.minDrainMs,
      formula: `${waves} x ${drain}`,
      why: `each new pod needs the node ports its predecessor frees on exit, so at most ${timeline.strategy.maxUnavailable} old pod(s) terminate at once`,
    };
  }
  const lastDeletion = Math.max(...times(timeline.events, 'deleted'));
  return {
    ms: lastDeletion + timeline.minDrainMs,
    formula: `last deletion at ${(lastDeletion / 1_000).toFixed(1)} s + ${drain}`,
    why: 'the controller deletes the next old pod once a new one is ready, not once the previous old pod has exited: old pods drain side by side',
  };
}

/** Every ordering or bound of the rollout that does not hold; empty when all do. */
export function rolloutViolations(timeline: RolloutTimeline): string[] {
  const { events, strategy, replicas, minDrainMs, durationMs } = timeline;
  const violations: string[] = [];
  const at = (pod: string, kind: RolloutEvent['kind']): number | undefined => events.find((e) => e.pod === pod && e.kind === kind)?.t;
  const deletions = events.filter((e) => e.kind === 'deleted').sort((a, b) => a.t - b.t);
  if (deletions.length !== replicas) violations.push(`${deletions.length} old pods deleted, not ${replicas}`);
  // Availability: the n-th deletion leaves replicas - n old pods, so at least n - maxUnavailable new ones were ready.
  deletions.forEach((deletion, index) => {
    const ready = events.filter((e) => e.kind === 'ready' && e.t <= deletion.t).length;
    if (ready < index + 1 - strategy.maxUnavailable) violations.push(`${deletion.pod} deleted at ${deletion.t} ms with ${ready} new pod(s) ready`);
  });
  for (const deletion of deletions) {
    const exited = at(deletion.pod, 'exited');
    if (exited === undefined) violations.push(`${deletion.pod} never exited`);
    else if (exited - deletion.t < minDrainMs) violations.push(`${deletion.pod} exited ${exited - deletion.t} ms after its deletion, under the minimum drain`);
  }
  if (timeline.inPlace) {
    // A new pod is placed only on the ports of an old pod that has exited.
    for (const placed of events.filter((e) => e.kind === 'scheduled')) {
      const slot = timeline.slots[placed.pod];
      const previous = deletions
        .filter((d) => timeline.slots[d.pod] === slot)
        .map((d) => at(d.pod, 'exited') ?? Infinity)
        .filter((t) => t <= placed.t);
      if (previous.length === 0) violations.push(`${placed.pod} placed at ${placed.t} ms on slot ${slot} before any old pod there exited`);
    }
  }
  const floor = rolloutFloor(timeline);
  if (durationMs < floor.ms) violations.push(`the rollout took ${durationMs} ms, under its floor of ${floor.ms} ms (${floor.formula})`);
  return violations;
}

function times(events: readonly RolloutEvent[], kind: RolloutEvent['kind']): number[] {
  return events.filter((e) => e.kind === kind).map((e) => e.t);
}
