// `npm run demo`: one pod termination under load: the real Envoy, configured by the chart and
// proxying to a real upstream, under the kubelet and traffic stand-ins, with the real built binary
// as the sidecar. Prints what a person wants to see.
import { ENVOY, SIDECAR, startEnvoyPod } from '../support/envoy-pod.js';
import type { TimelineEvent } from '../support/kubelet/timeline.js';
import { envoyVersion } from '../support/real-envoy/binary.js';
import { startUpstream } from '../support/real-envoy/upstream.js';
import { type ConnectionSample, terminateUnderLoad } from '../support/termination-run.js';
import { fleetDemo } from './fleet-demo.js';

const GRACE_SECONDS = 30;
const DEPROGRAMMING_DELAY_MS = 2_000;
const LONG_REQUEST_MS = 4_000;
const SHUTDOWN_FLAGS = [
  '--connections',
  'listeners',
  '--ignore-listener',
  'stats',
  '--ignore-listener',
  'ready',
  '--min-drain-duration',
  '3s',
  '--quiet-period',
  '1s',
  '--ignore-idle-connections',
  '--drain-timeout',
  '20s',
  '--check-interval',
  '500ms',
];

async function main(): Promise<void> {
  const upstream = await startUpstream();
  console.log('envoy-shutdown-manager demo: one pod termination under load\n');
  console.log(`  pod       Envoy ${await envoyVersion()} with the chart's bootstrap and flags (listener "ingress" -> an upstream; "stats", "ready")`);
  console.log('            + shutdown-manager sidecar running bin/envoy-shutdown-manager');
  console.log(`  hooks     envoy: httpGet /shutdown/ready; sidecar: exec envoy-shutdown-manager shutdown ${SHUTDOWN_FLAGS.join(' ')}`);
  console.log(`  clients   4 HTTP/1.1 keep-alive connections, 2 HTTP/2 sessions x 2 streams, a new client every 250 ms,`);
  console.log(
    `            one ${LONG_REQUEST_MS / 1000} s request over each protocol, idle pooled HTTP/1.1 and HTTP/2 connections, an idle scraper on "stats"`,
  );
  console.log(`  load bal. keeps sending new connections to the pod for ${DEPROGRAMMING_DELAY_MS / 1000} s after termination starts`);
  console.log(`  kubelet   grace period ${GRACE_SECONDS} s\n`);

  const pod = await startEnvoyPod({
    realEnvoy: { upstreamPort: upstream.port, values: { shutdown: { drainTimeout: 20 } } },
    terminationGracePeriodSeconds: GRACE_SECONDS,
    shutdownArgs: SHUTDOWN_FLAGS,
    managerArgs: ['--ready-timeout', '25s'],
  });
  try {
    const run = await terminateUnderLoad(pod, {
      deprogrammingDelayMs: DEPROGRAMMING_DELAY_MS,
      sampleEveryMs: 250,
      longRequest: { upstream, durationMs: LONG_REQUEST_MS },
      idleClients: true,
    });
    const { timeline, traffic, samples } = run;

    console.log('timeline (ms since the pod was deleted)');
    console.log(timeline.format().replace(/^/gm, '  '));
    console.log('\nactive connections on the pod\'s "ingress" listener');
    console.log(chart(samples));
    console.log('\nrequests');
    console.log(
      `  served by the terminating pod  ${traffic.requests.terminating} (${traffic.requests.terminating - run.requestsBeforeTermination} after termination began)`,
    );
    console.log(`  served by the other pod        ${traffic.requests.healthy}`);
    console.log(
      `  failed                         ${traffic.failures.length}${
        traffic.failures.length > 0
          ? `: ${traffic.failures
              .slice(0, 5)
              .map((f) => `${f.kind} (${f.detail})`)
              .join('; ')}`
          : ''
      }`,
    );
    const longFailed = run.longRequests.filter((r) => r.failure !== undefined);
    console.log(
      `  long requests answered         ${run.longRequests.length - longFailed.length} of ${run.longRequests.length}${longFailed.map((r) => `; ${r.protocol} failed: ${r.failure}`).join('')}`,
    );
    console.log(`  idle pooled connections        ${run.idle.length}, closed by Envoy as it exited: ${run.idle.filter((c) => c.closed()).length}`);

    const at = (event: TimelineEvent | undefined): number => event?.t ?? Number.NaN;
    const seconds = (ms: number): string => `${(ms / 1000).toFixed(2)} s`;
    const sidecarEnd = at(timeline.find('prestop-end', SIDECAR));
    const envoyHookEnd = at(timeline.find('prestop-end', ENVOY));
    const envoyExit = at(timeline.find('container-exit', ENVOY));
    console.log('\nphases');
    console.log(
      `  drain (the sidecar's hook)        ${seconds(sidecarEnd - at(timeline.find('prestop-start', SIDECAR)))}  ${timeline.find('prestop-end', SIDECAR)?.detail ?? ''}`,
    );
    console.log(
      `  Envoy held by its preStop hook    ${seconds(envoyHookEnd - at(timeline.find('prestop-start', ENVOY)))}  ${timeline.find('prestop-end', ENVOY)?.detail ?? ''}`,
    );
    console.log(`  Envoy exit after SIGTERM          ${seconds(envoyExit - at(timeline.find('sigterm', ENVOY)))}`);
    console.log(
      `  whole termination                 ${seconds(at(timeline.find('pod-gone')))} of a ${GRACE_SECONDS} s grace period${timeline.find('sigkill') ? ' (SIGKILL was needed)' : ', no SIGKILL'}`,
    );

    const summary = pod.pod
      .container(SIDECAR)
      .logs()
      .find((line) => line.msg === 'shutdown finished');
    console.log(`\nthe sidecar's log (kubectl logs -c ${SIDECAR}) ends with:\n  ${JSON.stringify(summary)}`);
    process.exitCode = traffic.failures.length === 0 && longFailed.length === 0 ? 0 : 1;
  } finally {
    await pod.destroy();
    await upstream.close();
  }
}

function chart(samples: readonly ConnectionSample[]): string {
  if (samples.length === 0) return '  (no samples)';
  const peak = Math.max(1, ...samples.map((s) => s.connections));
  return samples
    .map((s) => `  ${String(s.t).padStart(6)} ms ${String(s.connections).padStart(4)} ${'#'.repeat(Math.round((s.connections / peak) * 40))}`)
    .join('\n');
}

// `npm run demo -- --fleet`: the rolling update of a fleet behind HAProxy instead (fleet-demo.ts).
(process.argv.includes('--fleet') ? fleetDemo() : main()).catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
