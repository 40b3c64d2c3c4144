// Contour's generated pod (its provisioner's DaemonSet: the manager container with this project's
// image, Envoy with a fixture's listeners and Contour's own bootstrap, which leaves Envoy's drain
// strategy gradual and its drain time at Envoy's default) terminated as a 1.33 kubelet does:
// HTTP/1.1 and HTTP/2 through a load balancer on 8080, HTTPS with SNI and TLS passthrough bytes on
// 8443, a busy keep-alive client straight to the pod, long requests (and on `ingress` a passthrough
// stream held across the deletion), idle pooled connections and a scraper on its stats listener.
// No request or byte lost; Contour has no minimum drain and no drain timeout, so the drain ends on
// its quiet period once only idle connections are left, and the busy client is told to leave before
// that. Each case prints what it measured (docs/migrating.md quotes it).
import { afterEach, describe, expect, it } from 'vitest';
import { CONTOUR_CASES } from '../support/peer-pod/protocol-cases.js';
import { PodmanObjects, testImages } from '../support/podman/podman.js';
import { expectProtocolCase, PROTOCOL_CASE_TIMEOUT_MS } from './terminate-protocol-case.js';

const images = testImages();
const objects = new PodmanObjects();
afterEach(() => objects.removeAll());

describe("Contour's pod with the drop-in, terminated under load", () => {
  it.each(CONTOUR_CASES)(
    '$fixture: 0 lost, streams hold the drain, it ends early with only idle connections left',
    async (c) => {
      const outcome = await expectProtocolCase(objects, images, c);
      // Contour's Envoy drains gradually, but a failed health check makes its listeners close every
      // keep-alive connection on its next answer: the busy client was told to leave, and the drain
      // ended only after that (it counts that client's requests).
      const told = outcome.toldToLeaveAfterMs[c.busyClient ?? ''];
      expect(told).toBeDefined();
      expect(outcome.zero + (told as number)).toBeLessThan(outcome.finishedAt);
      console.info(`contour/${c.fixture}: ${JSON.stringify(outcome)}`);
    },
    PROTOCOL_CASE_TIMEOUT_MS,
  );
});
