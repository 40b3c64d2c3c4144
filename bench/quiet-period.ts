// 6. Quiet period vs minimum drain: whole pod terminations under load through the
// kubelet stand-in on the real Envoy, with a load balancer that keeps sending new connections for a while.
// Durations are scaled down about 10× (seconds here for tens of seconds in a cluster).
import { SIDECAR, startEnvoyPod } from '../test/support/envoy-pod.js';
import { envoyVersion } from '../test/support/real-envoy/binary.js';
import { startUpstream, type Upstream } from '../test/support/real-envoy/upstream.js';
import { terminateUnderLoad } from '../test/support/termination-run.js';
import { formatMs, medianAndSpread, progress, type Scenario, summarize, table } from './support/harness.js';

const RUNS = 2;
const SLOW_LB_MS = 3_000;
const FAST_LB_MS = 500;
/** Envoy Gateway's 10 s default, scaled. */
const DEFAULT_MIN_DRAIN = ['--min-drain-duration', '1s'];
/** Sized for the slowest load balancer (3 s) plus a margin, as an operator would without evidence. */
const WORST_CASE_MIN_DRAIN = ['--min-drain-duration', '3500ms'];
const QUIET = [...DEFAULT_MIN_DRAIN, '--quiet-period', '500ms'];
/** Every case: live listener counts, the scraper listener ignored, a 1 s check interval scaled to 100 ms. */
const COMMON = [
  '--connections',
  'listeners',
  '--ignore-listener',
  'stats',
  '--ignore-listener',
  'ready',
  '--check-interval',
  '100ms',
  '--drain-timeout',
  '10s',
];
/**
 * Steady but not dense traffic: each client pauses between requests, so the pod's connection
 * count touches zero now and then although new connections keep arriving, as on most services
 * outside their peak. (With back-to-back requests the count never reaches zero while the load
 * balancer still sends traffic, and a count-based drain waits for it by luck.)
 */
const TRAFFIC = { http1Clients: 3, http2Clients: 1, streamsPerSession: 1, thinkTimeMs: 100, reconnectEveryMs: 250 } as const;

interface Case {
  readonly scenario: string;
  readonly deprogrammingDelayMs: number;
  readonly flags: readonly string[];
}

const CASES: readonly Case[] = [
  { scenario: `slow load balancer (new connections for ${SLOW_LB_MS / 1000} s)`, deprogrammingDelayMs: SLOW_LB_MS, flags: DEFAULT_MIN_DRAIN },
  { scenario: '', deprogrammingDelayMs: SLOW_LB_MS, flags: QUIET },
  { scenario: '', deprogrammingDelayMs: SLOW_LB_MS, flags: WORST_CASE_MIN_DRAIN },
  { scenario: `fast load balancer (new connections for ${FAST_LB_MS / 1000} s)`, deprogrammingDelayMs: FAST_LB_MS, flags: WORST_CASE_MIN_DRAIN },
  { scenario: '', deprogrammingDelayMs: FAST_LB_MS, flags: QUIET },
];

interface Termination {
  readonly drainMs: number;
  /** Drain end minus the moment the load balancer stopped sending new connections: negative is too early. */
  readonly endedVsDeprogrammedMs: number;
  readonly failed: number;
  readonly failureKinds: readonly string[];
  readonly moved: number;
  readonly servedAfterDeletion: number;
}

async function terminate(c: Case, upstream: Upstream): Promise<Termination> {
  const pod = await startEnvoyPod({
    realEnvoy: { upstreamPort: upstream.port, values: { shutdown: { drainTimeout: 10 } } },
    terminationGracePeriodSeconds: 20,
    shutdownArgs: [...COMMON, ...c.flags],
    managerArgs: ['--ready-timeout', '15s'],
  });
  try {
    const run = await terminateUnderLoad(pod, { deprogrammingDelayMs: c.deprogrammingDelayMs, traffic: TRAFFIC, afterDeprogrammedMs: 500 });
    const start = run.timeline.find('prestop-start', SIDECAR)?.t ?? Number.NaN;
    const end = run.timeline.find('prestop-end', SIDECAR)?.t ?? Number.NaN;
    return {
      drainMs: end - start,
      endedVsDeprogrammedMs: end - c.deprogrammingDelayMs,
      failed: run.traffic.failures.length,
      failureKinds: [...new Set(run.traffic.failures.map((failure) => failure.kind))],
      moved: run.traffic.requests.healthy,
      servedAfterDeletion: run.traffic.requests.terminating - run.requestsBeforeTermination,
    };
  } finally {
    await pod.destroy();
  }
}

async function run(): Promise<string> {
  const results: Termination[][] = CASES.map(() => []);
  const upstream = await startUpstream();
  try {
    // Interleaved, so that a noisy moment of the machine does not land on one case.
    for (let n = 0; n < RUNS; n += 1) {
      for (const [index, c] of CASES.entries()) {
        const result = await terminate(c, upstream);
        results[index]?.push(result);
        progress('quiet-period', `${c.deprogrammingDelayMs} ms LB, ${c.flags.join(' ')}: drain ${formatMs(result.drainMs)}, ${result.failed} failed`);
      }
    }
  } finally {
    await upstream.close();
  }
  const rows = CASES.map((c, index) => {
    const runs = results[index] ?? [];
    const of = (pick: (t: Termination) => number): ReturnType<typeof summarize> => summarize(runs.map(pick));
    const kinds = [...new Set(runs.flatMap((t) => t.failureKinds))];
    return [
      c.scenario,
      `\`${c.flags.join(' ')}\``,
      medianAndSpread(
        of((t) => t.drainMs),
        formatMs,
        'min-max',
      ),
      signedMs(of((t) => t.endedVsDeprogrammedMs).median),
      `${runs.map((t) => t.failed).join(', ')}${kinds.length > 0 ? ` (${kinds.join(', ')})` : ''}`,
      of((t) => t.moved).median.toFixed(0),
      of((t) => t.servedAfterDeletion).median.toFixed(0),
    ];
  });
  return [
    `Each row is a pod (the real Envoy ${await envoyVersion()} with the chart's bootstrap and flags, proxying to an upstream, + \`bin/envoy-shutdown-manager\` as the sidecar, hooks wired as the chart wires them) terminated by the kubelet stand-in while the traffic stand-in runs: ${TRAFFIC.http1Clients} HTTP/1.1 keep-alive clients and ${TRAFFIC.http2Clients} HTTP/2 session, each pausing ${TRAFFIC.thinkTimeMs} ms between requests, a client reconnecting through the load balancer every ${TRAFFIC.reconnectEveryMs} ms, and every response during the drain carrying \`Connection: close\` / GOAWAY: new connections keep arriving for as long as the load balancer sends them to this pod, while the connection count touches zero between requests now and then. **Durations are scaled down about 10×**: a 3 s load balancer stands for a 30 s one (AWS NLB), the 1 s minimum drain for Envoy Gateway's 10 s default, the 100 ms check interval for 1 s, the 500 ms quiet period for 5 s. The clients keep going until 0.5 s after the load balancer stopped sending new connections to the pod, even when the pod is gone sooner, so the requests a dead pod still receives are counted. Every case also passes \`${COMMON.join(' ')}\`. ${RUNS} terminations per row, interleaved; drain duration median (min–max), failures per run.`,
    '',
    table(
      [
        'scenario',
        'flags',
        'drain duration',
        'drain ended vs LB deprogrammed (median)',
        'failed requests (per run)',
        'requests moved to the other pod (median)',
        'served by the terminating pod after deletion (median)',
      ],
      rows,
    ),
    '',
    `"Requests moved" are those the other pod served, counted until the pod is gone or 0.5 s past deprogramming, whichever is later (a longer drain shows more). "Drain ended vs LB deprogrammed" is the end of the sidecar's hook minus the moment the load balancer stopped sending new connections to the pod: below zero, Envoy was released (and got SIGTERM) while new connections still arrived, which then fail. \`--quiet-period\` ends the drain only once the counted listeners accepted no new connection for the quiet period, so it follows the real deprogramming delay: past it with a slow load balancer, and well before a worst-case minimum drain with a fast one.`,
  ].join('\n');
}

function signedMs(ms: number): string {
  return `${ms >= 0 ? '+' : '−'}${formatMs(Math.abs(ms))}${ms < 0 ? ' (too early)' : ''}`;
}

export const quietPeriod: Scenario = { name: 'quiet-period', title: '6. Quiet period vs minimum drain', run };
