// How each peer's flags become our configuration, and its exit codes ours; the name dispatch.

import { describe, expect, it } from 'vitest';
import { envoyConnection } from '../../src/drain/drain-config.js';
import { contour, contourExitCode, contourManagerConfig, contourShutdownConfig } from '../../src/dropin/contour.js';
import { peerCalled } from '../../src/dropin/dispatch.js';
import { egExitCode, egManagerConfig, egShutdownConfig, envoyGateway } from '../../src/dropin/envoy-gateway.js';
import { parseFlags } from '../../src/dropin/go-flags.js';
import { ignoredListeners } from '../../src/envoy/busy-connections.js';
import { countedListeners, sumOf, tableOf } from '../../src/envoy/connections.js';
import { statsAnswer } from '../../src/envoy/stats-answer.js';
import { readDrainState, writeDrainState } from '../../src/handoff/drain-state.js';
import { ExitCode } from '../../src/shared/errors.js';
import { ownIdentity } from '../../src/shared/process-identity.js';
import { tempDir } from '../support/cli.js';

const egFlags = (command: 'shutdown' | 'shutdown-manager', args: string[]) => parseFlags(args, envoyGateway.commands[command].flags).values;
const contourFlags = (command: 'shutdown' | 'shutdown-manager', args: string[]) =>
  parseFlags(args, { ...contour.globalFlags, ...contour.commands[command].flags }).values;
const LOCAL = { kind: 'tcp', host: '127.0.0.1', port: 19000 } as const;

describe('dispatch by name', () => {
  it.each([
    ['/bin/contour', ['/bin/contour'], 'contour'],
    ['envoy-gateway', ['/usr/local/bin/envoy-shutdown-manager', 'envoy-gateway'], 'envoy-gateway'],
    ['node', ['/usr/bin/node', '/opt/esm/envoy-gateway'], 'envoy-gateway'],
    ['envoy-shutdown-manager', ['/usr/local/bin/envoy-shutdown-manager'], undefined],
    ['node', ['/usr/bin/node', '/work/bin/envoy-shutdown-manager'], undefined],
    ['contour-x', ['contour-x'], undefined],
  ])('argv0 %s, argv %j: %s', (argv0, argv, peer) => {
    expect(peerCalled(argv0, argv)).toBe(peer);
  });
});

describe('Envoy Gateway', () => {
  it('manager: port 19002 on every address, /tmp/shutdown-ready, 610s by default, empty bodies', () => {
    expect(egManagerConfig(egFlags('shutdown-manager', []))).toMatchObject({
      host: undefined,
      port: 19002,
      readyFile: '/tmp/shutdown-ready',
      readyTimeoutMs: 610_000,
      endpoints: { readyPath: '/shutdown/ready', okBody: '' },
    });
    expect(egManagerConfig(egFlags('shutdown-manager', ['--ready-timeout=40s'])).readyTimeoutMs).toBe(40_000);
  });

  it('drain: defaults 60s/10s/0/0s, 1 s cadence, live listener gauges without its own 19001/19003 listeners, idle ones ignored after 2s quiet', () => {
    expect(egShutdownConfig(egFlags('shutdown', []), LOCAL, {})).toMatchObject({
      drainTimeout: 60_000,
      minDrainDuration: 10_000,
      exitAtConnections: 0,
      healthCheckFailureDelay: 0,
      checkInterval: 1_000,
      readyFile: '/tmp/shutdown-ready',
      connections: 'listeners',
      requireEnvoyPrestop: false,
      quietPeriod: 2_000,
      ignoreIdleConnections: true,
    });
  });

  it("takes our own variables to turn idle connections' exclusion off or change the quiet period, and refuses a bad one", () => {
    expect(egShutdownConfig(egFlags('shutdown', []), LOCAL, { ENVOY_SHUTDOWN_IGNORE_IDLE_CONNECTIONS: 'false' })).toMatchObject({
      quietPeriod: 0,
      ignoreIdleConnections: false,
    });
    expect(egShutdownConfig(egFlags('shutdown', []), LOCAL, { ENVOY_SHUTDOWN_QUIET_PERIOD: '5s' })).toMatchObject({
      quietPeriod: 5_000,
      ignoreIdleConnections: true,
    });
    expect(() => egShutdownConfig(egFlags('shutdown', []), LOCAL, { ENVOY_SHUTDOWN_QUIET_PERIOD: '0s' })).toThrow(/needs ENVOY_SHUTDOWN_QUIET_PERIOD above 0/);
    expect(() => egShutdownConfig(egFlags('shutdown', []), LOCAL, { ENVOY_SHUTDOWN_QUIET_PERIOD: 'soon' })).toThrow(/ENVOY_SHUTDOWN_QUIET_PERIOD/);
  });

  it('accepts what the controller may render that our own CLI would refuse: a minimum above the timeout, a delay beyond it, 0s', () => {
    const config = egShutdownConfig(egFlags('shutdown', ['--drain-timeout=5s', '--min-drain-duration=15s', '--health-check-failure-delay=2m0s']), LOCAL, {});
    expect(config).toMatchObject({ drainTimeout: 5_000, minDrainDuration: 5_000, healthCheckFailureDelay: 120_000 });
    expect(egShutdownConfig(egFlags('shutdown', ['--drain-timeout=0s', '--min-drain-duration=0s']), LOCAL, {})).toMatchObject({
      drainTimeout: 0,
      minDrainDuration: 0,
    });
  });

  it('counts a user listener named with 19001 and skips only its stats and readiness listeners', () => {
    const { ignoreListener, ignoreConnectionManagers } = envoyConnection(egShutdownConfig(egFlags('shutdown', []), LOCAL, {}));
    const stats = [
      { name: 'listener.0.0.0.0_19001.downstream_cx_active', value: 4 },
      { name: 'listener.[__]_19003.downstream_cx_active', value: 2 },
      { name: 'listener.tenant-19001.downstream_cx_active', value: 3 },
      { name: 'listener.0.0.0.0_10080.downstream_cx_active', value: 1 },
      { name: 'listener.0.0.0.0_10080.worker_0.downstream_cx_active', value: 1 },
      { name: 'listener.admin.downstream_cx_active', value: 1 },
    ];
    const rules = { ignoreListener, ignoreConnectionManagers: ignoreConnectionManagers ?? new Set<string>() };
    const answer = statsAnswer('text');
    for (const { name, value } of stats) answer.line(`${name}: ${value}`);
    const read = answer.finish();
    if (!('records' in read)) throw new Error(read.unreadable);
    const table = tableOf(read.records);
    expect(sumOf(countedListeners(table, ignoredListeners(table.listeners.keys(), rules, undefined)), 'active')).toBe(4);
  });

  it("finds its stats and readiness listeners in Envoy's configuration by their connection managers, wherever they listen", () => {
    const { ignoreListener, ignoreConnectionManagers } = envoyConnection(egShutdownConfig(egFlags('shutdown', []), LOCAL, {}));
    const serves = (prefix: string) => ({ names: [prefix], connectionManagers: new Set([prefix]), opaque: false });
    const topology = {
      dynamic: false,
      byStatName: new Map([
        ['10.0.0.1_19001', serves('eg-stats-http')],
        ['stats', serves('eg-ready-http')],
        ['0.0.0.0_10080', serves('http-10080')],
      ]),
    };
    const rules = { ignoreListener, ignoreConnectionManagers: ignoreConnectionManagers ?? new Set<string>() };
    expect([...ignoredListeners(topology.byStatName.keys(), rules, topology)]).toEqual(['10.0.0.1_19001', 'stats']);
  });

  it('exits 0 when drained, on the timeout and with Envoy unreachable; 1 when the ready file failed', () => {
    expect(
      [ExitCode.Drained, ExitCode.Timeout, ExitCode.EnvoyUnreachable, ExitCode.ReadyFileFailed, ExitCode.Usage, ExitCode.Unexpected].map(egExitCode),
    ).toEqual([0, 0, 0, 1, 1, 1]);
  });
});

describe('Contour', () => {
  it('manager: 8090, /admin/ok, no timeout, no watchdog, "OK" bodies; --serve-port and --ready-file', () => {
    expect(contourManagerConfig(contourFlags('shutdown-manager', []))).toMatchObject({
      port: 8090,
      readyFile: '/admin/ok',
      readyTimeoutMs: Number.POSITIVE_INFINITY,
      drainStartTimeoutMs: 0,
      endpoints: { readyPath: '/shutdown', okBody: 'OK' },
    });
    expect(contourManagerConfig(contourFlags('shutdown-manager', ['--serve-port=8091', '--ready-file', '/admin/done']))).toMatchObject({
      port: 8091,
      readyFile: '/admin/done',
    });
  });

  it('drain: the admin socket, no timeout, the check delay as the minimum, 5 s cadence, every listener but its stats one, idle ones ignored after 2s quiet', () => {
    expect(contourShutdownConfig(contourFlags('shutdown', []), {})).toMatchObject({
      adminAddress: { kind: 'unix', path: '/admin/admin.sock' },
      drainTimeout: Number.POSITIVE_INFINITY,
      minDrainDuration: 0,
      checkInterval: 5_000,
      exitAtConnections: 0,
      readyFile: '/admin/ok',
      connections: 'listeners',
      healthCheckFailureDelay: 0,
      quietPeriod: 2_000,
      ignoreIdleConnections: true,
    });
    expect(contourShutdownConfig(contourFlags('shutdown', ['--check-delay=2s', '--min-open-connections=3', '--check-interval=0s']), {})).toMatchObject({
      minDrainDuration: 2_000,
      exitAtConnections: 3,
      checkInterval: 25,
    });
  });

  it('refuses a TCP admin address: Contour reaches admin only over its socket', () => {
    expect(() => contourShutdownConfig(contourFlags('shutdown', ['--admin-address=127.0.0.1:9001']), {})).toThrow(/Unix socket/);
  });

  it('leaves out the listeners its admin, stats and health connection managers alone serve; counts TCP proxy listeners, which Contour does not', () => {
    const { ignoreListener, ignoreConnectionManagers } = envoyConnection(contourShutdownConfig(contourFlags('shutdown', []), {}));
    const http = (prefix: string) => ({ names: [prefix], connectionManagers: new Set([prefix]), opaque: false });
    const topology = {
      dynamic: true,
      byStatName: new Map([
        ['0.0.0.0_8002', http('stats')],
        ['ingress_http', http('ingress_http')],
        ['ingress_https', { names: ['ingress_https'], connectionManagers: new Set(['ingress_https']), opaque: true }],
      ]),
    };
    const rules = { ignoreListener, ignoreConnectionManagers: ignoreConnectionManagers ?? new Set<string>() };
    expect([...ignoredListeners(topology.byStatName.keys(), rules, topology)]).toEqual(['0.0.0.0_8002']);
    // Without Envoy's configuration, the stats listener is still known by its address.
    expect([...ignoredListeners(['[__]_8002', 'ingress_http'], rules, undefined)]).toEqual(['[__]_8002']);
  });

  it('a drain without a timeout is still seen running beside the ready file (JSON writes Infinity as null)', async () => {
    const dir = tempDir();
    try {
      const ready = `${dir.path}/ok`;
      const self = ownIdentity();
      writeDrainState(ready, {
        pid: self.pid,
        ...(self.startTime === undefined ? {} : { pidStartTime: self.startTime }),
        startedAt: new Date().toISOString(),
        startedBy: 'hook',
        phase: 'draining',
        minDrainMs: 0,
        drainTimeoutMs: Number.POSITIVE_INFINITY,
        quietPeriodMs: 0,
      });
      expect(await readDrainState(ready)).toMatchObject({ kind: 'running', state: { drainTimeoutMs: Number.POSITIVE_INFINITY } });
    } finally {
      dir.cleanup();
    }
  });

  it('exits 0 whenever the drain returns', () => {
    expect([ExitCode.Drained, ExitCode.Timeout, ExitCode.EnvoyUnreachable, ExitCode.ReadyFileFailed].map(contourExitCode)).toEqual([0, 0, 0, 0]);
  });
});
