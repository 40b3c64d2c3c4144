// Envoy Gateway's generated pod (its renderer's Deployment: the manager container with this
// project's image, Envoy with a fixture's configuration) terminated as a 1.33 kubelet does, each
// fixture's listeners under their own protocol's load: no request, call or byte lost, a stream held
// across the deletion holds the drain, and the drain ends within its minimum drain (2 s) + quiet
// period + two of its reads + 1 s once only idle connections (pooled, the scraper's) are left.
import { afterEach, describe, it } from 'vitest';
import { EG_TLS_CASES } from '../support/peer-pod/protocol-cases.js';
import { PodmanObjects, testImages } from '../support/podman/podman.js';
import { expectProtocolCase, PROTOCOL_CASE_TIMEOUT_MS } from './terminate-protocol-case.js';

const images = testImages();
const objects = new PodmanObjects();
afterEach(() => objects.removeAll());

describe("Envoy Gateway's pod with the drop-in, terminated under its listeners' own protocols", () => {
  it.each(EG_TLS_CASES)(
    '$fixture: 0 lost, streams hold the drain, it ends early with only idle connections left',
    async (c) => {
      await expectProtocolCase(objects, images, c);
    },
    PROTOCOL_CASE_TIMEOUT_MS,
  );
});
