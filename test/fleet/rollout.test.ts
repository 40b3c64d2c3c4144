// The rollout driver with stand-in pods (no podman): where each new pod goes, and what it waits for,
// by the order of the timeline's events.
import { describe, expect, it } from 'vitest';
import { type FleetPod, type RolloutOptions, type RolloutReport, rollout } from '../support/fleet/rollout.js';
import type { PodTermination } from '../support/podman/podman-kubelet.js';
import type { PodmanPod } from '../support/podman/podman-pod.js';

const tick = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 1));

/** Pods that start and terminate after a tick; the drain itself is not the driver's business. */
async function roll(options: Omit<RolloutOptions, 'replicas' | 'removeLagMs' | 'timeoutMs'>): Promise<RolloutReport> {
  const pod = (name: string, slot: number): FleetPod => ({ name, slot, pod: {} as PodmanPod });
  const initial = [0, 1, 2].map((slot) => pod(`old-${slot}`, slot));
  const terminated = async (): Promise<PodTermination> => {
    await tick();
    return { startedAt: Date.now(), containers: {} };
  };
  return rollout(
    initial,
    {
      startPod: async (name, slot) => {
        await tick();
        return pod(name, slot);
      },
      admit: () => Promise.resolve(),
      remove: () => Promise.resolve(),
      terminate: terminated,
      beforeDelete: () => Promise.resolve(),
    },
    { replicas: 3, removeLagMs: undefined, timeoutMs: 10_000, ...options },
  );
}

/** Per new pod, whether some old pod had exited before it was scheduled, one old pod per new one. */
function scheduledAfterExits(report: RolloutReport): boolean {
  let exited = 0;
  let scheduled = 0;
  for (const event of report.events) {
    if (event.kind === 'exited') exited += 1;
    if (event.kind === 'scheduled' && ++scheduled > exited) return false;
  }
  return true;
}

describe('rollout', () => {
  it('a DaemonSet without surge: each new pod only once an old one has exited, on a slot of its own', async () => {
    const report = await roll({ strategy: { maxSurge: 0, maxUnavailable: 1 }, inPlace: false, afterExit: true });
    expect(scheduledAfterExits(report)).toBe(true);
    expect(new Set(Object.values(report.slots)).size).toBe(6);
  });

  it('in place: each new pod takes the slot an exited pod freed', async () => {
    const report = await roll({ strategy: { maxSurge: 0, maxUnavailable: 1 }, inPlace: true });
    expect(scheduledAfterExits(report)).toBe(true);
    expect(new Set(Object.values(report.slots)).size).toBe(3);
  });

  it('a Deployment: its new pod starts while the old one drains', async () => {
    const report = await roll({ strategy: { maxSurge: 0, maxUnavailable: 1 }, inPlace: false });
    const first = (pod: string, kind: string): number => report.events.findIndex((e) => e.pod === pod && e.kind === kind);
    // The first deletion and its successor's start are one step of the controller, before any exit.
    expect(first('new-0', 'scheduled')).toBeLessThan(first('old-0', 'exited'));
    expect(new Set(Object.values(report.slots)).size).toBe(6);
  });
});
