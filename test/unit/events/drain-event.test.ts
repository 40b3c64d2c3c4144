import { describe, expect, it } from 'vitest';
import { drainEvent } from '../../../src/events/drain-event.js';
import { kubeEvent } from '../../../src/events/kube-event.js';
import type { ReadyReport } from '../../../src/handoff/ready-file.js';

const report = (result: ReadyReport['result'], connections: number | null, elapsedMs = 4_120): ReadyReport => ({
  result,
  connections,
  elapsedMs,
  exitCode: 0,
  finishedAt: '2026-11-25T17:00:00.000Z',
});

/** The drain ended at this moment; Envoy was released 19 ms later. */
const ENDED_AT = Date.parse('2026-11-25T17:00:00.000Z');
const RELEASED_AT = ENDED_AT + 19;

describe('drainEvent', () => {
  it.each([
    [report('drained', 0), 'Normal', 'EnvoyDrained', 'drained in 4.1 s, 0 connections left, Envoy released 19 ms after the drain ended'],
    [
      report('timeout', 3, 60_000),
      'Warning',
      'EnvoyDrainTimeout',
      'drain timed out after 60 s, 3 connections left, Envoy released 19 ms after the drain ended',
    ],
    [
      report('timeout', null, 60_000),
      'Warning',
      'EnvoyDrainUnknownCount',
      'drain timed out after 60 s with the connection count unknown (unknown is not zero), Envoy released 19 ms after the drain ended',
    ],
    [
      report('envoy-unreachable', null, 250),
      'Warning',
      'EnvoyUnreachable',
      "Envoy's admin API unreachable after 0.25 s: no drain (or Envoy exited during it), connection count unknown, Envoy released 19 ms after the drain ended",
    ],
    ['unreadable' as const, 'Warning', 'EnvoyDrainUnreported', 'Envoy released: the ready file holds no drain report'],
  ])('%j → %s %s', (given, type, reason, message) => {
    expect(drainEvent(given, RELEASED_AT)).toEqual({ type, reason, message });
  });

  it('counts from the last connection seen closed when the drain says when, and says one connection', () => {
    // Seen closed 3.9 s into a 4.12 s drain: 220 ms before it ended, 239 ms before the release.
    expect(drainEvent({ ...report('drained', 0), lastConnectionMs: 3_900 }, RELEASED_AT).message).toBe(
      'drained in 4.1 s, 0 connections left, Envoy released 239 ms after its last connection was seen closed',
    );
    expect(drainEvent({ ...report('drained', 1), finishedAt: 'garbage' }, RELEASED_AT).message).toBe('drained in 4.1 s, 1 connection left, Envoy released');
  });
});

describe('kubeEvent', () => {
  const pod = { name: 'gw-7d9f-abcde', namespace: 'edge', uid: '0b6f3c4e-1d2a-4f5e-9a8b-7c6d5e4f3a2b', nodeName: 'node-1' };

  it('puts the pod as involvedObject, count 1, second-precision timestamps, our component as source', () => {
    const event = kubeEvent(pod, drainEvent(report('drained', 0), RELEASED_AT), new Date('2026-11-25T17:00:01.987Z'), 'abc123');
    expect(event).toMatchObject({
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: 'gw-7d9f-abcde.abc123', namespace: 'edge' },
      involvedObject: { apiVersion: 'v1', kind: 'Pod', name: pod.name, namespace: 'edge', uid: pod.uid },
      type: 'Normal',
      reason: 'EnvoyDrained',
      count: 1,
      firstTimestamp: '2026-11-25T17:00:01Z',
      lastTimestamp: '2026-11-25T17:00:01Z',
      source: { component: 'envoy-shutdown-manager', host: 'node-1' },
      reportingComponent: 'envoy-shutdown-manager',
      reportingInstance: 'node-1',
    });
  });

  it('keeps a name within 253 characters and the instance within 128 for the longest pod name', () => {
    const long = { ...pod, name: `${'a'.repeat(250)}-b`, nodeName: undefined };
    const event = kubeEvent(long, drainEvent('unreadable', RELEASED_AT), new Date(), '0123456789abcdef');
    expect(event.metadata.name.length).toBeLessThanOrEqual(253);
    expect(event.metadata.name.endsWith('.0123456789abcdef')).toBe(true);
    expect(event.reportingInstance).toHaveLength(128);
    expect(event.source).toEqual({ component: 'envoy-shutdown-manager' });
  });
});
