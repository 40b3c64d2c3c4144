// A real drain as the manager sees it: real Envoy (the chart's bootstrap, behind its admin tap),
// the built manager holding Envoy's preStop request, and `shutdown` draining and writing the ready
// file, as in the pod. Tests read what the manager tells about it: /metrics, its log, its Events.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { cleanEnv, type LogLine, type RunningCli, type RunResult, startCli, tempDir } from './cli.js';
import { type HttpAnswer, idleHttp1, request } from './protocols/clients.js';
import { type DrainTarget, startDrainTarget } from './real-envoy/drain-target.js';

/**
 * The four ways a drain ends, each made on demand against real Envoy, and `slow-drained`: one that
 * completes only after SLOW_DRAIN_MS, held by a connection closed once the hook has drained that long.
 */
export type DrainOutcome = 'drained' | 'slow-drained' | 'timeout' | 'unknown-count' | 'unreachable';

/** How long a `slow-drained` drain lasts at least; its drain timeout is SLOW_DRAIN_TIMEOUT. */
export const SLOW_DRAIN_MS = 3_300;
const SLOW_DRAIN_TIMEOUT = ['--drain-timeout', '20s'];

export interface ObservedDrain {
  readonly envoy: DrainTarget;
  readonly manager: RunningCli;
  readonly managerPort: number;
  /**
   * Runs `shutdown` to the end with Envoy's preStop request held by the manager; resolves with both.
   * Several drains of one Envoy are possible as long as the last ends it (`unreachable`).
   */
  drain(outcome: DrainOutcome): Promise<{ readonly hook: RunResult; readonly prestop: HttpAnswer; readonly released: LogLine }>;
  /** SIGTERM, as kubelet stops the sidecar after its hook; resolves when the manager has exited. */
  stop(): Promise<RunResult>;
}

/** Fast drains: about half a second when nothing holds them. */
const FAST = ['--min-drain-duration', '300ms', '--drain-timeout', '1500ms', '--check-interval', '100ms', '--admin-timeout', '300ms'];

export async function startObservedDrain(
  defer: (cleanup: () => unknown) => void,
  manager: { args?: readonly string[]; env?: Record<string, string> } = {},
): Promise<ObservedDrain> {
  const envoy = await startDrainTarget();
  defer(() => envoy.close());
  const dir = tempDir();
  defer(dir.cleanup);
  const readyFile = join(dir.path, 'ready');
  const cli = startCli(
    ['shutdown-manager', '--port', '0', '--ready-file', readyFile, '--ready-timeout', '10s', ...(manager.args ?? [])],
    cleanEnv(manager.env),
  );
  defer(() => {
    cli.child.kill('SIGKILL');
    return cli.result.catch(() => undefined);
  });
  const listening = await cli.waitForLog((line) => line.msg === 'shutdown manager listening');
  const managerPort = listening.port as number;
  let drains = 0;
  return {
    envoy,
    manager: cli,
    managerPort,
    async drain(outcome) {
      drains += 1;
      const released = drains;
      // The earlier drain's report would answer the new waiter at once: gone, as a new pod's manager finds none.
      rmSync(readyFile, { force: true });
      const waiting = cli.logs.filter((line) => line.msg === 'waiting for the drain to finish').length;
      const prestop = request({ port: managerPort }, '/shutdown/ready');
      await cli.waitForLog((line) => line.msg === 'waiting for the drain to finish' && cli.logs.filter((l) => l.msg === line.msg).length > waiting);
      // An idle keep-alive connection holds the drain to its timeout; closed once the hook is done (slow-drained: once it drained long enough).
      const idle = outcome === 'timeout' || outcome === 'slow-drained' ? await idleHttp1(envoy.listenerPort('ingress')) : undefined;
      if (outcome === 'unknown-count') envoy.setAdminFault({ kind: 'status', status: 503 }, '/stats/prometheus');
      if (outcome === 'unreachable') await envoy.kill();
      const running = startCli([
        'shutdown',
        '--admin-address',
        envoy.adminAddress,
        '--ready-file',
        readyFile,
        '--connections',
        'listeners',
        '--ignore-listener',
        'stats',
        '--ignore-listener',
        'ready',
        ...FAST,
        ...(outcome === 'slow-drained' ? SLOW_DRAIN_TIMEOUT : []),
      ]);
      if (outcome === 'slow-drained') {
        await running.waitForLog((l) => l.msg === 'draining' && Number(l.elapsedMs) >= SLOW_DRAIN_MS, 30_000);
        await idle?.close();
      }
      const hook = await running.result;
      await idle?.close();
      const answer = await prestop;
      const line = await cli.waitForLog((l) => l.msg === 'drain finished: releasing envoy' && cli.logs.filter((m) => m.msg === l.msg).length >= released);
      return { hook, prestop: answer, released: line };
    },
    async stop() {
      cli.child.kill('SIGTERM');
      return cli.result;
    },
  };
}

export function metricsOf(drain: ObservedDrain, method = 'GET', path = '/metrics'): Promise<HttpAnswer> {
  return request({ port: drain.managerPort }, path, { method });
}
