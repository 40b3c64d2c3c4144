// `npm run demo -- --fleet`: a rolling update of four of the chart's pods (the project's image and
// real Envoy 1.40 in podman, terminated as a 1.33 kubelet does) behind HAProxy health-checking
// their readiness listener, under hey and HTTP/1.1 and HTTP/2 clients, in a private network
// namespace; then the same rollout without the preStop hooks. Prints each rollout's timeline,
// every pod's drain, and what hey, the clients and HAProxy counted.

import { fleetTimeline, rolloutFloor } from '../fleet/support/rollout-physics.js';
import { packageIfStale } from '../setup/product.js';
import { buildFixtures } from '../support/fixtures.js';
import { errorCount } from '../support/fleet/error-count.js';
import type { FleetOutput } from '../support/fleet/fleet-run.js';
import { MIN_DRAIN_S, REMOVE_LAG_MS, REPLICAS, runFleetCase, TEST_CHECK } from '../support/fleet/fleet-settings.js';
import { ensureHey, HEY_VERSION } from '../support/fleet/hey.js';
import { buildTestImages } from '../support/podman/images.js';
import { removeRun } from '../support/podman/podman-run.js';
import { ensureSystemPackages } from '../support/system-packages.js';

export async function fleetDemo(): Promise<void> {
  await ensureSystemPackages();
  await packageIfStale();
  await buildFixtures();
  const images = await buildTestImages(() => {});
  const heyBinary = ensureHey();
  const runId = `demo${process.pid}${Date.now().toString(36)}`;
  const context = { images: { manager: images.manager, managerTag: images.managerTag, envoy: images.envoy }, runId, heyBinary };
  console.log(`envoy-shutdown-manager demo: a rolling update of ${REPLICAS} pods behind HAProxy, under load\n`);
  console.log(
    `  pods      the chart's pod in podman (the project's image + real Envoy), shutdown.minDrainDuration ${MIN_DRAIN_S} s, in a private network namespace`,
  );
  console.log(`  rollout   the chart's default strategy (maxSurge 1, maxUnavailable 0); each old pod terminated as a 1.33 kubelet does`);
  console.log(`  balancer  HAProxy, retries off, keep-alive to the pods, checking each pod's readiness listener (OPTIONS / HTTP/1.0)`);
  console.log(
    `            every ${TEST_CHECK.intervalMs} ms, out after ${TEST_CHECK.fall} failures, in after ${TEST_CHECK.rise} successes (Google Cloud's default thresholds)`,
  );
  console.log(
    `  clients   hey ${HEY_VERSION} (8 workers x 25 requests/s), 3 HTTP/1.1 clients, 2 HTTP/2 sessions x 2 streams, long requests at each deletion\n`,
  );
  let failed = false;
  try {
    for (const hooks of [true, false]) {
      const out = await runFleetCase({ mode: 'health-check', network: 'pod', hooks }, context);
      print(out);
      failed ||= hooks ? errorCount(out) > 0 : errorCount(out) === 0;
    }
    const lagged = await runFleetCase({ mode: 'endpoints', network: 'hostNetwork', hooks: true }, context);
    console.log(`(endpoints mode: HAProxy takes each pod out ${REMOVE_LAG_MS} ms after its deletion, hostNetwork strategy)`);
    print(lagged);
    failed ||= errorCount(lagged) > 0;
  } finally {
    await removeRun(runId);
  }
  process.exitCode = failed ? 1 : 0;
}

function print(out: FleetOutput): void {
  const title = out.input.hooks ? "with the chart's preStop hooks" : 'WITHOUT the preStop hooks (control)';
  const floor = rolloutFloor(fleetTimeline(out));
  console.log(`rollout ${title}: ${(out.rollout.durationMs / 1000).toFixed(1)} s`);
  if (out.input.hooks) {
    console.log(`  floor     ${floor.formula} = ${(floor.ms / 1000).toFixed(1)} s`);
    console.log(`            why: ${floor.why}`);
  }
  console.log('  timeline (ms since the rollout began)');
  for (const event of out.rollout.events) console.log(`    ${String(event.t).padStart(6)}  ${event.pod.padEnd(6)} ${event.kind}`);
  console.log("  old pods: deletion -> HAProxy took it out / Envoy's hook returned (the drain) / every container exited");
  for (const drain of out.rollout.drains) {
    const letGo = out.balancerLetGoMs[drain.pod];
    console.log(
      `    ${drain.pod.padEnd(6)} ${String(letGo ?? 'never').padStart(6)} ms / ${String(drain.hookMs ?? 'no hook').padStart(7)}${drain.hookMs === undefined ? '' : ' ms'} / ${drain.exitMs} ms, exit codes ${JSON.stringify(drain.exitCodes)}`,
    );
  }
  console.log('  requests the application received through each pod (old pods: in all / while terminating)');
  for (const [pod, traffic] of Object.entries(out.podTraffic))
    console.log(`    ${pod.padEnd(6)} ${traffic.served}${traffic.whileTerminating === undefined ? '' : ` / ${traffic.whileTerminating}`}`);
  console.log('  errors');
  console.log(
    `    hey         ${out.hey.responses} responses, ${out.hey.failed} failed: statuses ${JSON.stringify(out.hey.statuses)}, errors ${JSON.stringify(out.hey.errors)}`,
  );
  console.log(
    `    HTTP/1.1    ${out.clients.http1.succeeded} answered, ${out.clients.http1.failures.length} failed${out.clients.http1.failures
      .slice(0, 2)
      .map((f) => `; ${f}`)
      .join('')}`,
  );
  console.log(
    `    HTTP/2      ${out.clients.http2.succeeded} answered, ${out.clients.http2.failures.length} failed${out.clients.http2.failures
      .slice(0, 2)
      .map((f) => `; ${f}`)
      .join('')}`,
  );
  console.log(`    long        ${out.longRequests.sent} sent, ${out.longRequests.failures.length} failed`);
  console.log(`    HAProxy     ${JSON.stringify(out.haproxy.totals)} (HAProxy ${out.versions.haproxy})`);
  console.log(`    in all      ${errorCount(out)}\n`);
}
