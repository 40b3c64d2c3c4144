// Whole-pod termination on the real Envoy 1.40, configured by the chart and proxying to a real
// upstream: the kubelet stand-in runs both preStop hooks at once, sends each container SIGTERM
// when its own hook returns, and SIGKILL at the grace period.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ENVOY, type EnvoyPod, type EnvoyPodOptions, SIDECAR, startEnvoyPod } from '../support/envoy-pod.js';
import { type Connection, idleHttp1 } from '../support/protocols/clients.js';
import { startUpstream, type Upstream } from '../support/real-envoy/upstream.js';
import { terminateUnderLoad } from '../support/termination-run.js';

let upstream: Upstream;
beforeAll(async () => {
  upstream = await startUpstream();
});
afterAll(() => upstream.close());

const pods: EnvoyPod[] = [];
const idle: Connection[] = [];
afterEach(async () => {
  for (const connection of idle.splice(0)) await connection.close();
  for (const pod of pods.splice(0)) await pod.destroy();
});

/** Envoy's --drain-time-s is the chart's drainTimeout; the hook's own flags come after the chart's defaults. */
async function start(options: Omit<EnvoyPodOptions, 'realEnvoy'>, statsFlushInterval?: string): Promise<EnvoyPod> {
  const flush = statsFlushInterval === undefined ? {} : { statsFlushInterval };
  const pod = await startEnvoyPod({ realEnvoy: { upstreamPort: upstream.port, values: { shutdown: { drainTimeout: 20 } }, ...flush }, ...options });
  pods.push(pod);
  return pod;
}

/** The chart's choice: live listener gauges without its stats and readiness listeners, a quiet period, idle connections ignored once quiet. */
const CHART_LIKE = [
  '--ignore-listener',
  'stats',
  '--ignore-listener',
  'ready',
  '--quiet-period',
  '1s',
  '--ignore-idle-connections',
  '--check-interval',
  '200ms',
];

/**
 * Envoy's stats flush interval where the termination must come before the first flush: twice the
 * chart's 5 s, so a busy machine has the time to start both Envoys and the load; `total` then
 * ends the drain at that first flush, well inside its 20 s timeout.
 */
const FIRST_FLUSH_MS = 10_000;

/** `event`, or a clear failure naming `what` when the timeline never recorded it. */
function found<T>(event: T | undefined, what: string): T {
  if (event === undefined) throw new Error(`the timeline has no ${what}`);
  return event;
}

function finished(pod: EnvoyPod): Record<string, unknown> | undefined {
  return pod.pod
    .container(SIDECAR)
    .logs()
    .find((l) => l.msg === 'shutdown finished');
}

describe('pod termination on real Envoy', () => {
  it('without --ignore-idle-connections an idle pooled connection holds the drain to its timeout; the pod is still gone before SIGKILL', async () => {
    const { pod, listeners } = await start({
      terminationGracePeriodSeconds: 8,
      shutdownArgs: [
        '--connections',
        'listeners',
        '--ignore-listener',
        'stats',
        '--ignore-listener',
        'ready',
        '--drain-timeout',
        '2s',
        '--min-drain-duration',
        '500ms',
        '--check-interval',
        '200ms',
      ],
      managerArgs: ['--ready-timeout', '5s'],
    });
    const connection = await idleHttp1(listeners.ingress as number);
    idle.push(connection);
    const timeline = await pod.terminate();

    expect(timeline.find('prestop-end', SIDECAR)?.detail).toBe('exit 3'); // drain timeout, connections left
    const envoyHookEnd = found(timeline.find('prestop-end', ENVOY), "Envoy's prestop-end");
    expect(envoyHookEnd.detail).toBe('HTTP 200');
    expect(envoyHookEnd.t).toBeGreaterThanOrEqual(2_000);
    expect(found(timeline.find('sigterm', ENVOY), "Envoy's sigterm").t).toBeGreaterThanOrEqual(envoyHookEnd.t);
    expect(timeline.find('sigkill')).toBeUndefined();
    expect(found(timeline.find('pod-gone'), 'pod-gone').t).toBeLessThan(8_000);
    const released = pod
      .container(SIDECAR)
      .logs()
      .find((l) => l.msg === 'drain finished: releasing envoy');
    expect(released).toMatchObject({ result: 'timeout', connections: 1 });
    expect(connection.closed()).toBe(true); // Envoy kept it open through the drain and closed it on exit
    // The hook's own log lines reached the sidecar's log (what `kubectl logs -c shutdown-manager` shows).
    expect(
      pod
        .container(SIDECAR)
        .logs()
        .some((l) => l.msg === 'drain timeout exceeded' && l.component === 'shutdown'),
    ).toBe(true);
  });

  it('ends within seconds when Envoy is already dead, not at the drain timeout', async () => {
    const envoyPod = await start({ terminationGracePeriodSeconds: 90, shutdownArgs: ['--drain-timeout', '60s'], managerArgs: ['--ready-timeout', '70s'] });
    const { pod } = envoyPod;
    pod.container(ENVOY).signal('SIGKILL');
    await pod.container(ENVOY).exited;
    const timeline = await pod.terminate();
    expect(timeline.find('prestop-end', SIDECAR)?.detail).toBe('exit 1');
    expect(found(timeline.find('pod-gone'), 'pod-gone').t).toBeLessThan(15_000);
    expect(finished(envoyPod)).toMatchObject({ result: 'envoy-unreachable', exitCode: 1 });
  });
});

describe('zero loss under load on real Envoy', () => {
  for (const connections of ['listeners', 'total'] as const) {
    it(`--connections ${connections}: HTTP/1.1 and HTTP/2 clients, long requests in flight, idle pooled clients and a scraper: 0 lost, done well before the drain timeout`, async () => {
      const envoyPod = await start({
        terminationGracePeriodSeconds: 30,
        shutdownArgs: ['--connections', connections, ...CHART_LIKE, '--min-drain-duration', '1s', '--drain-timeout', '20s'],
        managerArgs: ['--ready-timeout', '25s'],
      });
      const run = await terminateUnderLoad(envoyPod, {
        deprogrammingDelayMs: 700,
        traffic: { http1Clients: 3, http2Clients: 2 },
        longRequest: { upstream, durationMs: 2_500 },
        idleClients: true,
      });
      const { timeline, traffic } = run;

      expect(traffic.failures).toEqual([]);
      expect(run.longRequests.map((r) => r.failure)).toEqual([undefined, undefined]);
      expect(run.requestsBeforeTermination).toBeGreaterThan(0);
      expect(traffic.requests.terminating).toBeGreaterThan(run.requestsBeforeTermination); // it kept serving while draining
      expect(traffic.requests.healthy).toBeGreaterThan(0); // and clients moved on
      // The idle pooled connections did not hold the drain: it ended on the count, far from its 20 s timeout.
      expect(timeline.find('prestop-end', SIDECAR)?.detail).toBe('exit 0');
      expect(finished(envoyPod)).toMatchObject({ result: 'drained', connections: 0 });
      expect(finished(envoyPod)?.elapsedMs).toBeLessThan(10_000);
      expect(run.idle.map((c) => c.closed())).toEqual([true, true, true]); // they lived until Envoy exited
      // Envoy got SIGTERM only after the drain ended, and only then did it stop serving.
      // The drain's end is its 'drain completed' line: 'shutdown finished' comes after the ready file
      // is written and the drain marker removed, by which time Envoy may rightly have its SIGTERM.
      const completed = envoyPod.pod
        .container(SIDECAR)
        .logs()
        .find((line) => line.msg === 'drain completed');
      const drainEnded = Date.parse(String(completed?.time));
      const envoySigterm = found(timeline.find('sigterm', ENVOY), "Envoy's sigterm");
      expect(envoySigterm.at).toBeGreaterThanOrEqual(drainEnded);
      expect(traffic.lastRequestToTerminatingAt).toBeLessThanOrEqual(envoySigterm.at);
      expect(timeline.find('prestop-end', ENVOY)?.detail).toBe('HTTP 200');
      expect(
        Math.abs(
          found(timeline.find('prestop-start', ENVOY), "Envoy's prestop-start").t -
            found(timeline.find('prestop-start', SIDECAR), "the sidecar's prestop-start").t,
        ),
      ).toBeLessThan(1_000);
      expect(timeline.find('sigkill')).toBeUndefined();
    });
  }

  for (const connections of ['total', 'listeners'] as const) {
    it(`--connections ${connections}, terminated right after Envoy started, before its first stats flush: long requests over HTTP/1.1 and HTTP/2 are not lost`, async () => {
      const envoyPod = await start(
        {
          terminationGracePeriodSeconds: 30,
          shutdownArgs: ['--connections', connections, '--min-drain-duration', '500ms', '--drain-timeout', '20s', '--check-interval', '200ms'],
          managerArgs: ['--ready-timeout', '25s'],
        },
        `${FIRST_FLUSH_MS / 1_000}s`,
      );
      const run = await terminateUnderLoad(envoyPod, {
        deprogrammingDelayMs: 300,
        steadyLoadFirst: false,
        traffic: { http1Clients: 2, http2Clients: 1 },
        longRequest: { upstream, durationMs: 2_000 },
        statsAtTermination: ['server.total_connections', 'listener.ingress.downstream_cx_active'],
      });

      // The premise: Envoy's stats flush had not counted the open connections yet, so
      // server.total_connections said fewer than the live gauge, as it does until its first flush.
      const stats = run.statsAtTermination;
      expect(stats['listener.ingress.downstream_cx_active']).toBeGreaterThanOrEqual(2); // the long requests at least
      expect(stats['server.total_connections']).toBeLessThan(stats['listener.ingress.downstream_cx_active'] ?? 0);
      expect(run.timeline.startedAt - envoyPod.pod.container(ENVOY).startedAt).toBeLessThan(FIRST_FLUSH_MS); // before its first periodic flush
      expect(run.longRequests.map((r) => r.failure)).toEqual([undefined, undefined]);
      expect(run.traffic.failures).toEqual([]);
      expect(finished(envoyPod)).toMatchObject({ result: 'drained', connections: 0 });
    });
  }

  it('the negative control: the same load with Envoy SIGTERMed at once, without the manager, loses requests', async () => {
    const envoyPod = await start({ terminationGracePeriodSeconds: 30, withoutManager: true });
    const run = await terminateUnderLoad(envoyPod, {
      deprogrammingDelayMs: 700,
      traffic: { http1Clients: 3, http2Clients: 2 },
      longRequest: { upstream, durationMs: 2_500 },
      idleClients: true,
    });
    expect(run.longRequests.filter((r) => r.failure !== undefined)).toHaveLength(2);
    expect(run.traffic.failures.length).toBeGreaterThan(0);
  });
});
