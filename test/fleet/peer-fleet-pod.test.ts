// The peers' rendered workloads as the fleet rolls them: the strategy each controller computes for
// the fleet's size, and the pod spec with a user's flags after the manager's preStop command.
import { describe, expect, it } from 'vitest';
import { fleetPodSpec, newPodAfterExit, peerStrategy, scaledStrategy } from '../support/fleet/peer-fleet-pod.js';

describe('scaledStrategy', () => {
  it('a Deployment: 25 % each by default, maxSurge rounded up, maxUnavailable down', () => {
    expect(scaledStrategy('Deployment', undefined, 8)).toEqual({ maxSurge: 2, maxUnavailable: 2 });
    expect(scaledStrategy('Deployment', undefined, 3)).toEqual({ maxSurge: 1, maxUnavailable: 0 });
    expect(scaledStrategy('Deployment', { maxSurge: 0, maxUnavailable: '10%' }, 8)).toEqual({ maxSurge: 0, maxUnavailable: 1 });
  });

  it('a DaemonSet: maxUnavailable 1 and no surge by default, percentages rounded up', () => {
    expect(scaledStrategy('DaemonSet', undefined, 8)).toEqual({ maxSurge: 0, maxUnavailable: 1 });
    expect(scaledStrategy('DaemonSet', { maxUnavailable: '10%' }, 8)).toEqual({ maxSurge: 0, maxUnavailable: 1 });
    expect(scaledStrategy('DaemonSet', { maxUnavailable: '10%' }, 11)).toEqual({ maxSurge: 0, maxUnavailable: 2 });
    expect(scaledStrategy('DaemonSet', { maxSurge: '25%', maxUnavailable: 0 }, 8)).toEqual({ maxSurge: 2, maxUnavailable: 0 });
  });

  it('refuses what is neither a number nor a percentage', () => {
    expect(() => scaledStrategy('Deployment', { maxSurge: 'many' }, 8)).toThrow(/not a number or percentage/);
  });
});

describe('the peers as rendered', () => {
  it("Envoy Gateway's Deployment takes the defaults; Contour's DaemonSet its 10 %", () => {
    expect(peerStrategy('envoy-gateway', 8)).toEqual({ maxSurge: 2, maxUnavailable: 2 });
    expect(peerStrategy('contour', 8)).toEqual({ maxSurge: 0, maxUnavailable: 1 });
  });

  it("Contour's DaemonSet, without surge, replaces each pod only once it is gone; Envoy Gateway's Deployment at once", () => {
    expect(newPodAfterExit('contour', peerStrategy('contour', 8))).toBe(true);
    expect(newPodAfterExit('contour', { maxSurge: 2, maxUnavailable: 0 })).toBe(false); // a DaemonSet with surge adds the new pod beside the old
    expect(newPodAfterExit('envoy-gateway', peerStrategy('envoy-gateway', 8))).toBe(false);
    expect(newPodAfterExit('envoy-gateway', { maxSurge: 0, maxUnavailable: 1 })).toBe(false);
  });

  it("a user's flags go after the manager's preStop command, nothing else changes", () => {
    const rendered = fleetPodSpec({ peer: 'contour', hookFlags: [] });
    const flagged = fleetPodSpec({ peer: 'contour', hookFlags: ['--check-delay=2s'] });
    expect(flagged.containers.find((c) => c.name === 'shutdown-manager')?.lifecycle?.preStop?.exec?.command).toEqual([
      '/bin/contour',
      'envoy',
      'shutdown',
      '--check-delay=2s',
    ]);
    expect(flagged.containers.find((c) => c.name === 'envoy')).toEqual(rendered.containers.find((c) => c.name === 'envoy'));
    expect({ ...flagged, containers: [] }).toEqual({ ...rendered, containers: [] });
  });
});
