// Envoy Gateway's generated pod (its renderer's Deployment: the manager container with this
// project's image, Envoy with a fixture's configuration), terminated as a 1.33 kubelet does under
// HTTP/1.1 and HTTP/2 load with long requests, idle pooled connections and a scraper on its stats
// listener: no request lost, and the drain ends within its minimum drain (2 s, from the
// EnvoyProxy) + quiet period + two of its reads + 1 s once only idle connections are left.
import { afterEach, describe, it } from 'vitest';
import { PEER_CASES } from '../support/peer-pod/peer-cases.js';
import { PodmanObjects, testImages } from '../support/podman/podman.js';
import { expectZeroLossAndEarlyEnd } from './terminate-peer-case.js';

const images = testImages();
const objects = new PodmanObjects();
afterEach(() => objects.removeAll());

describe("Envoy Gateway's pod with the drop-in, terminated under load", () => {
  it.each(PEER_CASES.filter((c) => c.peer === 'envoy-gateway'))('$fixture: 0 lost, the drain ends early with only idle connections left', (c) =>
    expectZeroLossAndEarlyEnd(objects, images, c),
  );
});
