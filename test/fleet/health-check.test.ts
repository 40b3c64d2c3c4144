// A rolling update of the chart's Deployment (default strategy: maxSurge 1, maxUnavailable 0) behind
// HAProxy as a cloud load balancer: it health-checks each pod's readiness listener with its default
// check (OPTIONS / HTTP/1.0) at Google Cloud's default thresholds, times scaled down. Under hey, HTTP/1.1 and
// HTTP/2 clients and long requests, all through HAProxy with retries off: zero errors with the
// chart's hooks; the same rollout without them (the control) loses requests.
import { describe, expect, inject, it } from 'vitest';
import { RUN_TIMEOUT_MS, runFleetCase } from '../support/fleet/fleet-settings.js';
import { testImages } from '../support/podman/podman.js';
import { expectLosses, expectZeroErrors, summary } from './support/fleet-assertions.js';

const { manager, managerTag, envoy, runId } = testImages();
const context = { images: { manager, managerTag, envoy }, runId, heyBinary: inject('heyBinary') };

describe('a rollout of 4 pods behind HAProxy health-checking their readiness (default strategy)', () => {
  it(
    'with the hooks: no error from hey, the HTTP/1.1 and HTTP/2 clients, the long requests or HAProxy',
    async () => {
      const out = await runFleetCase({ mode: 'health-check', network: 'pod', hooks: true }, context);
      console.log(summary(out));
      expect(out.strategy).toEqual({ maxSurge: 1, maxUnavailable: 0 });
      expectZeroErrors(out);
    },
    RUN_TIMEOUT_MS + 10_000,
  );

  it(
    'without the hooks (control): the same rollout loses requests',
    async () => {
      const out = await runFleetCase({ mode: 'health-check', network: 'pod', hooks: false }, context);
      console.log(summary(out));
      expectLosses(out);
    },
    RUN_TIMEOUT_MS + 10_000,
  );
});
