// The termination both peer test files run on each of their cases (one file per peer, so the two
// run side by side): the peer's generated pod with the drop-in, under load, judged the same way.
import { dirname } from 'node:path';
import { expect } from 'vitest';
import { testCertificate } from '../support/peer-fixtures/certificate.js';
import { drainEnd } from '../support/peer-pod/drain-end.js';
import { type PeerCase, peerBootstrap, peerPodSpec } from '../support/peer-pod/peer-cases.js';
import { terminatePeerUnderLoad } from '../support/peer-pod/peer-termination.js';
import type { PodmanObjects } from '../support/podman/podman.js';

/** No request lost; both hooks succeeded; the drain ended on its count within its bound (drain-end.ts), idle connections still open. */
export async function expectZeroLossAndEarlyEnd(objects: PodmanObjects, images: { manager: string; envoy: string }, c: PeerCase): Promise<void> {
  const run = await terminatePeerUnderLoad(objects, {
    ...c,
    spec: peerPodSpec(c.peer),
    bootstrap: peerBootstrap(c),
    images,
    envoyMounts: [dirname(testCertificate().certFile)],
  });
  const { envoy, 'shutdown-manager': manager } = run.termination.containers;
  const story = run.managerLog;
  expect(run.traffic.failures).toEqual([]);
  expect(run.longRequests.map((r) => r.failure)).toEqual([undefined, undefined]);
  expect(run.traffic.requests.terminating).toBeGreaterThan(run.requestsBeforeTermination);
  expect(run.traffic.requests.healthy).toBeGreaterThan(0);
  expect(envoy, story).toMatchObject({ hook: 'httpGet 200', exitCode: 0 });
  expect(manager, story).toMatchObject({ hook: 'exec exit 0', exitCode: 0 });
  const end = drainEnd(run.managerLog, run.busyUntil);
  expect(end.result, story).toBe('drained');
  // Only idle connections (pooled HTTP/1.1 and HTTP/2, the scraper's) were left once the long
  // requests were answered and the load balancer had moved the clients: they must not hold it.
  expect(end.boundMs, story).toBeLessThan(10_000);
  expect(run.idleReleasedByTest, story).toBe(false);
  expect(end.elapsedMs, story).toBeLessThanOrEqual(end.boundMs);
}
