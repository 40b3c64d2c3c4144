// A blind minimum drain against --quiet-period, when load balancers take longer, or shorter, than
// expected to deprogram the pod: the real Envoy 1.40 as the chart configures it, proxying to a real
// upstream, under the kubelet, traffic and load-balancer stand-ins.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type EnvoyPod, SIDECAR, startEnvoyPod } from '../support/envoy-pod.js';
import { startUpstream, type Upstream } from '../support/real-envoy/upstream.js';
import { type LoadedTermination, terminateUnderLoad } from '../support/termination-run.js';

let upstream: Upstream;
beforeAll(async () => {
  upstream = await startUpstream();
});
afterAll(() => upstream.close());

const pods: EnvoyPod[] = [];
afterEach(async () => {
  for (const pod of pods.splice(0)) await pod.destroy();
});

async function terminate(
  shutdownArgs: string[],
  deprogrammingDelayMs: number,
): Promise<{ run: LoadedTermination; drainEndedAt: number; drainElapsedMs: number; deprogrammedAt: number }> {
  const pod = await startEnvoyPod({
    realEnvoy: { upstreamPort: upstream.port, values: { shutdown: { drainTimeout: 20 } } },
    terminationGracePeriodSeconds: 30,
    shutdownArgs: [
      '--connections',
      'listeners',
      '--ignore-listener',
      'stats',
      '--ignore-listener',
      'ready',
      '--drain-timeout',
      '20s',
      '--check-interval',
      '200ms',
      ...shutdownArgs,
    ],
    managerArgs: ['--ready-timeout', '25s'],
  });
  pods.push(pod);
  // New clients keep arriving (a reconnect every 100 ms), as they do behind a load balancer, and
  // each pauses between requests, so the pod's count touches zero now and then while traffic still
  // arrives (with back-to-back requests a blind drain would wait past the load balancer by luck).
  const run = await terminateUnderLoad(pod, {
    deprogrammingDelayMs,
    traffic: { http1Clients: 3, http2Clients: 1, streamsPerSession: 1, thinkTimeMs: 100, reconnectEveryMs: 100 },
  });
  const finished = pod.pod
    .container(SIDECAR)
    .logs()
    .find((line) => line.msg === 'shutdown finished');
  expect(finished).toBeDefined();
  // The load balancer starts deprogramming in the same tick as the termination (termination-run.ts).
  return {
    run,
    drainEndedAt: Date.parse(String(finished?.time)),
    drainElapsedMs: Number(finished?.elapsedMs),
    deprogrammedAt: run.timeline.startedAt + deprogrammingDelayMs,
  };
}

describe('--quiet-period against a minimum drain', () => {
  it('when load balancers deprogram slower than the minimum drain: the blind drain ends too early or loses requests, the quiet period waits and loses none', async () => {
    const blind = await terminate(['--min-drain-duration', '1s'], 3_000);
    const tooEarly = blind.drainEndedAt < blind.deprogrammedAt;
    expect(tooEarly || blind.run.traffic.failures.length > 0).toBe(true);

    const quiet = await terminate(['--min-drain-duration', '1s', '--quiet-period', '1s'], 3_000);
    expect(quiet.run.traffic.failures).toEqual([]);
    expect(quiet.drainEndedAt).toBeGreaterThanOrEqual(quiet.deprogrammedAt);
  });

  it('when they deprogram fast: the quiet period ends well before a minimum drain sized for the worst case, losing nothing', async () => {
    const worstCaseMinimumMs = 6_000;
    const quiet = await terminate(['--min-drain-duration', '500ms', '--quiet-period', '1s'], 300);
    expect(quiet.run.traffic.failures).toEqual([]);
    // The drain's own clock, not wall time since the termination: a busy machine's slow hook start is not the drain's.
    expect(quiet.drainElapsedMs).toBeLessThan(worstCaseMinimumMs);
  });
});
