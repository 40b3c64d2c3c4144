// Every command line Envoy Gateway's and Contour's controllers render for the shutdown-manager
// container and its preStop hook, each run through the single executable by the name the pod
// calls it (`envoy-gateway` on PATH, `/bin/contour`), against real Envoy 1.40 shaped like the
// peer's pod, on the peer's fixed ports and paths inside a private namespace. Each row states
// what the peer's pod relies on; a flag the dispatcher does not accept fails its row.
import { describe, expect, it } from 'vitest';
import { contour } from '../../src/dropin/contour.js';
import { envoyGateway } from '../../src/dropin/envoy-gateway.js';
import type { HttpSeen, PodObservation } from '../support/dropin/pod.js';
import { runInSandbox, type Scenario } from './sandbox.js';

const EG_MANAGER = ['envoy-gateway', 'envoy', 'shutdown-manager'];
const EG_HOOK = ['envoy-gateway', 'envoy', 'shutdown'];
const C_MANAGER = ['/bin/contour', 'envoy', 'shutdown-manager'];
const C_HOOK = ['/bin/contour', 'envoy', 'shutdown'];

/**
 * Times are [at least, below]: at least so long after the hook started (or Envoy's preStop request
 * was sent), which the drain's own clocks guarantee; below so long after the drain started (the
 * hook's first POST to Envoy), or after the hook started when it never reached Envoy. Rows run side
 * by side, so a busy machine's slow start of a hook is not counted against the drain.
 */
interface Expect {
  /** The hook's exit and when. */
  readonly hookExit?: number;
  readonly hookAtMs?: readonly [number, number];
  /** The answer Envoy's preStop httpGet gets. */
  readonly ready?: { readonly status: number; readonly body?: string; readonly atMs?: readonly [number, number] };
  /**
   * Released this soon after the last idle connection closed: a safety bound for a busy machine,
   * where held by the connection the release would come at the drain timeout (60 s), or never.
   */
  readonly releasedWithinMsOfClose?: number;
  /** The first admin calls, in order; and when /healthcheck/fail came, or that it never did. */
  readonly firstCalls?: readonly string[];
  readonly healthCheckFailAtMs?: readonly [number, number] | 'never';
  readonly readyFile?: boolean;
  readonly healthzBody?: string;
  readonly hookLogsJson?: boolean;
}

interface Row {
  readonly id: string;
  /** Where the controller renders this shape. */
  readonly from: string;
  readonly pod: Scenario;
  readonly expect: Expect;
}

const eg = (manager: readonly string[] | undefined, hook: readonly string[] | undefined, rest: Partial<Scenario> = {}): Scenario => ({
  peer: 'envoy-gateway',
  ...(manager === undefined ? {} : { manager }),
  ...(hook === undefined ? {} : { hook }),
  readyFile: '/tmp/shutdown-ready',
  managerPort: 19002,
  readyPath: '/shutdown/ready',
  ...rest,
});

const ct = (manager: readonly string[] | undefined, hook: readonly string[] | undefined, rest: Partial<Scenario> = {}): Scenario => ({
  peer: 'contour',
  ...(manager === undefined ? {} : { manager }),
  ...(hook === undefined ? {} : { hook }),
  readyFile: '/admin/ok',
  managerPort: 8090,
  readyPath: '/shutdown',
  ...rest,
});

const DRAIN_START = ['POST /healthcheck/fail', 'POST /drain_listeners'];
/** Our own variable, which a peer's pod never sets: idle connections count as the peer counts them. */
const COUNT_IDLE = { ENVOY_SHUTDOWN_IGNORE_IDLE_CONNECTIONS: 'false' };

const GOLDEN: readonly Row[] = [
  {
    id: 'G1+G3 defaults: min drain 10s',
    from: 'EG resource.go, no EnvoyProxy shutdown config',
    pod: eg(EG_MANAGER, EG_HOOK),
    expect: {
      hookExit: 0,
      hookAtMs: [10_000, 13_000],
      ready: { status: 200, body: '', atMs: [10_000, 13_000] },
      firstCalls: DRAIN_START,
      readyFile: true,
      healthzBody: '',
    },
  },
  {
    id: 'G2+G4 EG test fixture: drainTimeout 30s, minDrainDuration 15s',
    from: 'EG testdata/deployments/shutdown-manager.yaml',
    pod: eg([...EG_MANAGER, '--ready-timeout=40s'], [...EG_HOOK, '--drain-timeout=30s', '--min-drain-duration=15s'], {
      idleOn: [10080],
      closeIdleAfterMs: 2_000,
    }),
    expect: { hookExit: 0, hookAtMs: [15_000, 18_000], ready: { status: 200, body: '', atMs: [15_000, 18_000] }, firstCalls: DRAIN_START, readyFile: true },
  },
  {
    id: 'G2+G4 an idle pooled connection no longer holds the drain past the minimum (Envoy Gateway waits for it to close)',
    from: 'drainTimeout 60s, minDrainDuration 10s; quiet period 2s',
    pod: eg([...EG_MANAGER, '--ready-timeout=70s'], [...EG_HOOK, '--drain-timeout=60s', '--min-drain-duration=10s'], { idleOn: [10080] }),
    expect: { hookExit: 0, hookAtMs: [10_000, 13_000], ready: { status: 200, body: '' }, firstCalls: DRAIN_START, readyFile: true },
  },
  {
    id: 'G2+G4 with idle connections counted (our variable): released as the last connection closes after the minimum',
    from: 'drainTimeout 60s, minDrainDuration 10s; ENVOY_SHUTDOWN_IGNORE_IDLE_CONNECTIONS=false',
    pod: eg([...EG_MANAGER, '--ready-timeout=70s'], [...EG_HOOK, '--drain-timeout=60s', '--min-drain-duration=10s'], {
      idleOn: [10080],
      closeIdleAfterMs: 11_000,
      hookEnv: COUNT_IDLE,
    }),
    expect: {
      hookExit: 0,
      hookAtMs: [11_000, 14_000],
      ready: { status: 200, body: '' },
      releasedWithinMsOfClose: 2_000,
      firstCalls: DRAIN_START,
      readyFile: true,
    },
  },
  {
    id: 'G4 all three flags: drained before the health check failure delay',
    from: 'EG resource_test.go: --health-check-failure-delay=15s --drain-timeout=30s --min-drain-duration=5s',
    pod: eg(EG_MANAGER, [...EG_HOOK, '--health-check-failure-delay=15s', '--drain-timeout=30s', '--min-drain-duration=5s']),
    expect: {
      hookExit: 0,
      hookAtMs: [5_000, 8_000],
      ready: { status: 200, body: '' },
      firstCalls: ['POST /drain_listeners'],
      healthCheckFailAtMs: 'never',
      readyFile: true,
    },
  },
  {
    id: 'G4 sub-second health check failure delay',
    from: 'EG resource_test.go: --health-check-failure-delay=400ms',
    pod: eg(EG_MANAGER, [...EG_HOOK, '--health-check-failure-delay=400ms']),
    expect: { hookExit: 0, hookAtMs: [10_000, 13_000], firstCalls: ['POST /drain_listeners'], healthCheckFailAtMs: [400, 2_500], readyFile: true },
  },
  {
    id: 'G4 Go duration 1m30s; drain timeout with a connection left: exit 0, file written',
    from: 'Duration.String() of healthCheckFailureDelay 90s; drainTimeout 2s',
    pod: eg(EG_MANAGER, [...EG_HOOK, '--health-check-failure-delay=1m30s', '--drain-timeout=2s', '--min-drain-duration=0s'], { idleOn: [10080] }),
    expect: { hookExit: 0, hookAtMs: [2_000, 4_500], ready: { status: 200, body: '' }, healthCheckFailAtMs: 'never', readyFile: true },
  },
  {
    id: 'G4 Go durations 2m0s and 1h0m0s',
    from: 'Duration.String() of 2m and 1h',
    pod: eg(
      undefined,
      [...EG_HOOK, '--health-check-failure-delay=2m0s', '--health-check-failure-delay=1h0m0s', '--drain-timeout=1s', '--min-drain-duration=0s'],
      { idleOn: [10080] },
    ),
    expect: { hookExit: 0, hookAtMs: [1_000, 3_500], healthCheckFailAtMs: 'never', readyFile: true },
  },
  {
    id: 'G4 sub-second values rounded to 0s: ends at once',
    from: '%.0fs of 400ms drainTimeout and minDrainDuration',
    pod: eg(EG_MANAGER, [...EG_HOOK, '--drain-timeout=0s', '--min-drain-duration=0s'], { idleOn: [10080] }),
    expect: { hookExit: 0, hookAtMs: [0, 2_500], ready: { status: 200, body: '' }, readyFile: true },
  },
  {
    id: 'G4 "--flag value" syntax; a user listener named with 19001 is counted (EG skips it), the stats listener is not',
    from: 'cobra syntax; EG substring match on 19001',
    pod: eg(EG_MANAGER, [...EG_HOOK, '--drain-timeout', '3s', '--min-drain-duration', '1s'], { idleOn: [10081, 19001, 19003], hookEnv: COUNT_IDLE }),
    expect: { hookExit: 0, hookAtMs: [3_000, 5_500], ready: { status: 200, body: '' }, readyFile: true },
  },
  {
    id: 'G4 stats and readiness listeners alone are not counted',
    from: 'EG skips its 19001 and 19003 listeners',
    pod: eg(undefined, [...EG_HOOK, '--drain-timeout=30s', '--min-drain-duration=1s'], { idleOn: [19001, 19003], hookEnv: COUNT_IDLE }),
    expect: { hookExit: 0, hookAtMs: [1_000, 3_500], readyFile: true },
  },
  {
    id: 'G4 --exit-at-connections',
    from: 'EG flag the controller never renders',
    pod: eg(undefined, [...EG_HOOK, '--exit-at-connections=1', '--min-drain-duration=1s', '--drain-timeout=30s'], { idleOn: [10080], hookEnv: COUNT_IDLE }),
    expect: { hookExit: 0, hookAtMs: [1_000, 3_500], readyFile: true },
  },
  {
    id: 'G3 IPv6 gateway: admin on [::1]:19000 only',
    from: 'EG bootstrap with ipFamily IPv6; the hook dials localhost',
    pod: eg(EG_MANAGER, [...EG_HOOK, '--drain-timeout=30s', '--min-drain-duration=1s'], { adminHost: '::1' }),
    expect: { hookExit: 0, hookAtMs: [2_000, 4_500], ready: { status: 200, body: '' }, firstCalls: DRAIN_START, readyFile: true },
  },
  {
    id: 'G3 admin API unreachable: exit 0 and the ready file, as Envoy Gateway',
    from: 'EG hook semantics; ours gives up after its retries instead of sleeping to the drain timeout',
    pod: eg(EG_MANAGER, [...EG_HOOK, '--drain-timeout=30s', '--min-drain-duration=1s'], { adminUnreachable: true }),
    expect: { hookExit: 0, hookAtMs: [0, 10_000], ready: { status: 200, body: '' }, readyFile: true },
  },
  {
    id: 'G2 ready timeout without a drain: 500',
    from: '--ready-timeout=<drainTimeout+10>s, no ready file',
    pod: eg([...EG_MANAGER, '--ready-timeout=2s'], undefined),
    expect: { ready: { status: 500, atMs: [2_000, 4_000] }, readyFile: false },
  },
  {
    id: 'C1+C2 defaults: a TCP passthrough connection is counted (Contour cuts it), an idle HTTP one not after the quiet period; released as the last closes',
    from: 'Contour dataplane.go and examples/contour/03-envoy.yaml',
    pod: ct(C_MANAGER, C_HOOK, { idleOn: [8080, 8443], closeIdleAfterMs: 3_000 }),
    expect: {
      hookExit: 0,
      hookAtMs: [3_000, 4_500],
      ready: { status: 200, body: 'OK' },
      releasedWithinMsOfClose: 2_000,
      firstCalls: DRAIN_START,
      readyFile: true,
      healthzBody: 'OK',
    },
  },
  {
    id: 'C2 --check-delay, --check-interval, --min-open-connections',
    from: 'flags Contour documents for the DaemonSet',
    pod: ct(C_MANAGER, [...C_HOOK, '--check-delay=2s', '--check-interval=1s', '--min-open-connections=1'], { idleOn: [8080] }),
    expect: { hookExit: 0, hookAtMs: [2_000, 4_000], ready: { status: 200, body: 'OK' }, firstCalls: DRAIN_START, readyFile: true },
  },
  {
    id: 'C2 --drain-delay: health checks fail only after it',
    from: 'flag Contour documents',
    pod: ct(C_MANAGER, [...C_HOOK, '--drain-delay=1s']),
    expect: { hookExit: 0, hookAtMs: [3_000, 5_000], ready: { status: 200, body: 'OK' }, healthCheckFailAtMs: [1_000, 2_500], readyFile: true },
  },
  {
    id: 'C1+C2 --serve-port, --ready-file, --admin-address, deprecated --admin-port, global --log-format',
    from: 'flags Contour documents; kingpin "--flag value" syntax',
    pod: ct(
      [...C_MANAGER, '--serve-port', '8091', '--ready-file', '/admin/done'],
      ['/bin/contour', '--log-format=json', 'envoy', 'shutdown', '--admin-address=/admin/admin.sock', '--ready-file=/admin/done', '--admin-port=9001'],
      { managerPort: 8091, readyFile: '/admin/done' },
    ),
    expect: { hookExit: 0, hookAtMs: [2_000, 4_500], ready: { status: 200, body: 'OK' }, firstCalls: DRAIN_START, readyFile: true, hookLogsJson: true },
  },
];

describe('golden argv of Envoy Gateway and Contour pods, on real Envoy', () => {
  it('the table covers every flag each peer command declares', () => {
    for (const [peer, rows] of [
      [envoyGateway, GOLDEN.filter((r) => r.pod.peer === 'envoy-gateway')],
      [contour, GOLDEN.filter((r) => r.pod.peer === 'contour')],
    ] as const) {
      const argvs = rows.flatMap((row) => [...(row.pod.manager ?? []), ...(row.pod.hook ?? [])]);
      for (const command of Object.values(peer.commands)) {
        for (const flag of [...Object.keys(command.flags), ...Object.keys(peer.globalFlags)]) {
          expect(
            argvs.some((arg) => arg === `--${flag}` || arg.startsWith(`--${flag}=`)),
            `${peer.name} --${flag}`,
          ).toBe(true);
        }
      }
    }
  });

  it.concurrent.each(GOLDEN.map((row) => [row.id, row] as const))(
    '%s',
    async (_id, row) => {
      const seen = await runInSandbox(row.pod);
      check(row, seen);
    },
    90_000,
  );
});

function check(row: Row, seen: PodObservation): void {
  const { expect: want } = row;
  const context = `${row.id}\n${JSON.stringify({ hook: seen.hook, ready: seen.ready, calls: seen.adminCalls.slice(0, 6) }, null, 1).slice(0, 4_000)}`;
  const drainStartMs = seen.adminCalls.find((call) => call.method === 'POST')?.atMs ?? 0;
  const within = (value: number | undefined, [low, high]: readonly [number, number]): boolean =>
    value !== undefined && value >= low && value - drainStartMs < high;
  if (want.hookExit !== undefined) expect(seen.hook?.exitCode, context).toBe(want.hookExit);
  if (want.hookAtMs !== undefined) expect(within(seen.hook?.atMs, want.hookAtMs), context).toBe(true);
  if (want.ready !== undefined) {
    const ready = seen.ready as HttpSeen;
    expect(typeof ready, context).toBe('object');
    expect(ready.status, context).toBe(want.ready.status);
    if (want.ready.body !== undefined) expect(ready.body, context).toBe(want.ready.body);
    if (want.ready.atMs !== undefined) expect(within(ready.atMs, want.ready.atMs), context).toBe(true);
  }
  if (want.releasedWithinMsOfClose !== undefined) {
    const released = (seen.ready as HttpSeen).atMs - (seen.idleClosedAtMs ?? Number.NaN);
    expect(released >= 0 && released < want.releasedWithinMsOfClose, `${context}\nreleased ${released} ms after the close`).toBe(true);
  }
  if (want.firstCalls !== undefined) {
    const calls = seen.adminCalls.filter((call) => call.method === 'POST').map((call) => `${call.method} ${call.path}`);
    expect(calls.slice(0, want.firstCalls.length), context).toEqual(want.firstCalls);
  }
  if (want.firstCalls?.includes('POST /drain_listeners') === true) {
    expect(seen.adminCalls.find((call) => call.path === '/drain_listeners')?.query, context).toBe('graceful&skip_exit');
  }
  const failedAt = seen.adminCalls.find((call) => call.path === '/healthcheck/fail')?.atMs;
  if (want.healthCheckFailAtMs === 'never') expect(failedAt, context).toBeUndefined();
  else if (want.healthCheckFailAtMs !== undefined) expect(within(failedAt, want.healthCheckFailAtMs), context).toBe(true);
  if (want.readyFile !== undefined) expect(seen.readyFileExists, context).toBe(want.readyFile);
  if (row.pod.manager !== undefined) {
    // Both address families answer /healthz, and SIGTERM ends the manager with 0.
    for (const family of ['ipv4', 'ipv6'] as const) {
      const answer = seen.healthz?.[family] as HttpSeen;
      expect(answer?.status, `${context}\n${family}`).toBe(200);
      if (want.healthzBody !== undefined) expect(answer.body).toBe(want.healthzBody);
    }
    expect(seen.managerExit?.code, context).toBe(0);
  }
  if (want.hookLogsJson === true) {
    const lines = (seen.hook?.stdout ?? '').trim().split('\n');
    expect(
      lines.every((line) => line.startsWith('{')),
      context,
    ).toBe(true);
  }
}
