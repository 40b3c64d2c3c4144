// A rolling update of the chart's hostNetwork Deployment (its strategy: maxSurge 0, maxUnavailable 1,
// each new pod on the ports the old one freed) behind HAProxy as an EndpointSlice-following balancer:
// no health checks; the driver takes each pod out through HAProxy's runtime API shortly after it is
// marked terminating, as kube-proxy or a gateway does. Under hey, HTTP/1.1 and HTTP/2 clients and
// long requests, retries off: zero errors with the chart's hooks; the control loses requests.
import { describe, expect, inject, it } from 'vitest';
import { RUN_TIMEOUT_MS, runFleetCase } from '../support/fleet/fleet-settings.js';
import { testImages } from '../support/podman/podman.js';
import { expectLosses, expectZeroErrors, summary } from './support/fleet-assertions.js';

const { manager, managerTag, envoy, runId } = testImages();
const context = { images: { manager, managerTag, envoy }, runId, heyBinary: inject('heyBinary') };

describe('a rollout of 4 hostNetwork pods behind HAProxy following their endpoints (hostNetwork strategy)', () => {
  it(
    'with the hooks: no error from hey, the HTTP/1.1 and HTTP/2 clients, the long requests or HAProxy',
    async () => {
      const out = await runFleetCase({ mode: 'endpoints', network: 'hostNetwork', hooks: true }, context);
      console.log(summary(out));
      expect(out.strategy).toEqual({ maxSurge: 0, maxUnavailable: 1 });
      expectZeroErrors(out);
    },
    RUN_TIMEOUT_MS + 10_000,
  );

  it(
    'without the hooks (control): the same rollout loses requests',
    async () => {
      const out = await runFleetCase({ mode: 'endpoints', network: 'hostNetwork', hooks: false }, context);
      console.log(summary(out));
      expectLosses(out);
    },
    RUN_TIMEOUT_MS + 10_000,
  );
});
