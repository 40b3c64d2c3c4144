// The termination every peer fixture's protocol case runs (one file per group, so they run side by
// side): the peer's generated pod with the drop-in, its listeners under their own protocols' load,
// judged as the HTTP cases are, plus what the protocols add: every stream held open across the
// deletion held the drain until its client ended it.
import { dirname } from 'node:path';
import { expect } from 'vitest';
import { testCertificate } from '../support/peer-fixtures/certificate.js';
import { drainEnd } from '../support/peer-pod/drain-end.js';
import { peerBootstrap, peerPodSpec } from '../support/peer-pod/peer-cases.js';
import { terminatePeer } from '../support/peer-pod/peer-termination.js';
import type { ProtocolCase } from '../support/peer-pod/protocol-cases.js';
import type { PodmanObjects } from '../support/podman/podman.js';

/** Test timeout for one case: the pod's readiness alone may take 90 s on a busy machine, the drain well under 30 s. */
export const PROTOCOL_CASE_TIMEOUT_MS = 180_000;

export interface ProtocolOutcome {
  readonly fixture: string;
  readonly elapsedMs: number;
  readonly boundMs: number;
  /** Per side load: ms from time zero to the pod closing its connection (Connection: close, GOAWAY). */
  readonly toldToLeaveAfterMs: Readonly<Record<string, number | undefined>>;
  /** When the drain ended (the hook's finishedAt) and time zero, both Date.now() clock. */
  readonly finishedAt: number;
  readonly zero: number;
  /** Ms from time zero to the pod's last answer, and to the end of each held stream. */
  readonly busyUntilAfterMs: number;
  readonly heldEndedAfterMs: Readonly<Record<string, number>>;
}

/** No request, call or byte lost; both hooks succeeded; held streams held the drain; it ended on its count within its bound, idle connections still open. */
export async function expectProtocolCase(objects: PodmanObjects, images: { manager: string; envoy: string }, c: ProtocolCase): Promise<ProtocolOutcome> {
  const run = await terminatePeer(objects, {
    ...c,
    spec: peerPodSpec(c.peer),
    bootstrap: peerBootstrap(c),
    images,
    envoyMounts: [dirname(testCertificate().certFile)],
  });
  const { envoy, 'shutdown-manager': manager } = run.termination.containers;
  const story = `${run.managerLog}\n${JSON.stringify(run.sides)}`;
  if (run.traffic !== undefined) {
    expect(run.traffic.failures).toEqual([]);
    expect(run.traffic.requests.terminating).toBeGreaterThan(run.requestsBeforeTermination);
    expect(run.traffic.requests.healthy).toBeGreaterThan(0);
  }
  expect(run.longRequests.map((r) => r.failure)).toEqual(run.longRequests.map(() => undefined));
  for (const side of run.sides) {
    expect(side.failures, side.name).toEqual([]);
    // Its client was busy at time zero: the pod answered it at least once more.
    expect(side.servedAfterDeletion, side.name).toBeGreaterThan(0);
  }
  expect(envoy, story).toMatchObject({ hook: 'httpGet 200', exitCode: 0 });
  expect(manager, story).toMatchObject({ hook: 'exec exit 0', exitCode: 0 });
  const end = drainEnd(run.managerLog, run.busyUntil);
  expect(end.result, story).toBe('drained');
  const finishedAt = Date.parse(/finishedAt[=":]+([0-9TZ:.-]+)/.exec(run.managerLog)?.[1] ?? '');
  // A TCP proxy, TLS passthrough or gRPC stream open across the deletion holds the drain until
  // its client began to end it (both times are this machine's clock).
  for (const side of run.sides.filter((s) => s.heldUntil !== undefined))
    expect(finishedAt, `${side.name}\n${story}`).toBeGreaterThanOrEqual(side.heldUntil as number);
  // Once those ended, only idle connections (pooled, the scraper's) were left: they must not hold it.
  expect(run.idleReleasedByTest, story).toBe(false);
  expect(end.elapsedMs, story).toBeLessThanOrEqual(end.boundMs);
  return {
    fixture: c.fixture,
    elapsedMs: end.elapsedMs,
    boundMs: end.boundMs,
    toldToLeaveAfterMs: Object.fromEntries(run.sides.map((s) => [s.name, s.toldToLeaveAfterMs])),
    finishedAt,
    zero: run.termination.startedAt,
    busyUntilAfterMs: run.busyUntil - run.termination.startedAt,
    heldEndedAfterMs: Object.fromEntries(run.sides.flatMap((s) => (s.heldUntil === undefined ? [] : [[s.name, s.heldUntil - run.termination.startedAt]]))),
  };
}
