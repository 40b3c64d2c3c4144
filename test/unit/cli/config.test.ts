import { describe, expect, it } from 'vitest';
import { type ShutdownOptions, shutdownConfig } from '../../../src/drain/drain-config.js';
import { parseConnectionSource } from '../../../src/envoy/envoy-control.js';
import { managerConfig } from '../../../src/manager/manager-config.js';
import type { ManagerOptions } from '../../../src/manager/manager-settings.js';
import { UsageError } from '../../../src/shared/errors.js';
import { hookLogMirror } from '../../../src/shared/hook-log.js';
import {
  collectListenerNames,
  parseBoolean,
  parseCount,
  parseHost,
  parseListenPort,
  parseMaxWaiters,
  parsePositiveDuration,
  parseReadyFile,
} from '../../../src/shared/parsers.js';

const base: ShutdownOptions = {
  adminAddress: { kind: 'tcp', host: '127.0.0.1', port: 19000 },
  drainTimeout: 60_000,
  minDrainDuration: 10_000,
  exitAtConnections: 0,
  checkInterval: 1_000,
  healthCheckFailureDelay: 0,
  quietPeriod: 0,
  readyFile: '/tmp/shutdown-ready',
  connections: 'total',
  ignoreListener: [],
  ignoreIdleConnections: false,
  adminTimeout: 2_000,
  requireEnvoyPrestop: false,
  envoyPrestopWait: 10_000,
};

describe('single-value parsers', () => {
  it.each([
    [() => parseCount('0'), 0],
    [() => parseCount('42'), 42],
    [() => parseListenPort('19002'), 19002],
    [() => parseListenPort('0'), 0],
    [() => parseHost('::1'), '::1'],
    [() => parseHost('[::1]'), '::1'],
    [() => parseHost('10.0.0.7'), '10.0.0.7'],
    [() => parseMaxWaiters('1'), 1],
    [() => parseBoolean('true'), true],
    [() => parseBoolean('YES'), true],
    [() => parseBoolean('1'), true],
    [() => parseBoolean('false'), false],
    [() => parsePositiveDuration('1ms'), 1],
    [() => parseConnectionSource('listeners'), 'listeners'],
    [() => parseReadyFile('/shared/ready'), '/shared/ready'],
    [() => collectListenerNames('a, b', ['x']), ['x', 'a', 'b']],
  ])('%#', (parse, expected) => {
    expect(parse()).toEqual(expected);
  });

  it.each([
    () => parseCount('-1'),
    () => parseCount('1.5'),
    () => parseCount('1e3'),
    () => parseCount(''),
    () => parseCount('99999999999999999999'),
    () => parseListenPort('65536'),
    () => parseListenPort('-1'),
    () => parseHost('pod.local'),
    () => parseMaxWaiters('0'),
    () => parseBoolean('maybe'),
    () => parseBoolean(''),
    () => parseBoolean(' true'),
    () => parseCount(' 1'),
    () => parseCount('1\n'),
    () => parseHost('[10.0.0.7]'),
    () => parseHost(' ::1'),
    () => parseConnectionSource('total '),
    () => parseReadyFile('/shared/'),
    () => parseReadyFile(`/shared/${'r'.repeat(220)}`),
    () => parsePositiveDuration('0s'),
    () => parseConnectionSource('Total'),
    () => parseReadyFile('relative/ready'),
    () => collectListenerNames('a,,b'),
  ])('rejects %#', (parse) => {
    expect(parse).toThrow(UsageError);
  });
});

describe('shutdownConfig', () => {
  it('keeps valid options', () => {
    const config = shutdownConfig({ ...base, ignoreListener: ['stats', 'stats'] });
    expect(config.drainTimeout).toBe(60_000);
    expect(config.ignoreListener).toEqual(['stats']);
  });

  it.each([
    [{ drainTimeout: 0, minDrainDuration: 0 }, /--drain-timeout must be greater than 0/],
    [{ minDrainDuration: 61_000 }, /--min-drain-duration must not be longer than --drain-timeout/],
    [{ healthCheckFailureDelay: 60_000 }, /--health-check-failure-delay must be shorter than --drain-timeout/],
    [{ quietPeriod: 60_000 }, /--quiet-period must be shorter than --drain-timeout/],
    [{ readyFile: false, requireEnvoyPrestop: true }, /--require-envoy-prestop needs a ready file/],
    [{ ignoreIdleConnections: true, quietPeriod: 0 }, /--ignore-idle-connections needs --quiet-period above 0/],
  ] as Array<[Partial<ShutdownOptions>, RegExp]>)('rejects %j', (override, message) => {
    expect(() => shutdownConfig({ ...base, ...override })).toThrow(message);
  });

  it.each([[false], ['']] as const)('reads %j as no ready file', (readyFile) => {
    expect(shutdownConfig({ ...base, readyFile }).readyFile).toBeUndefined();
  });

  it('accepts a minimum drain equal to the timeout', () => {
    expect(shutdownConfig({ ...base, minDrainDuration: 60_000 }).minDrainDuration).toBe(60_000);
  });
});

describe('hookLogMirror', () => {
  it.each([
    [{}, 1234, undefined],
    [{ KUBERNETES_SERVICE_HOST: '10.0.0.1' }, 1, undefined], // the container's main process: its stdout is already the log
    [{ KUBERNETES_SERVICE_HOST: '10.0.0.1' }, 1234, '/proc/1/fd/1'],
    [{ KUBERNETES_SERVICE_HOST: '' }, 1234, undefined],
    [{ KUBERNETES_SERVICE_HOST: '10.0.0.1', ENVOY_SHUTDOWN_HOOK_LOG_PATH: '/x' }, 1234, '/x'],
  ])('%j as pid %d: %s', (env, pid, expected) => {
    expect(hookLogMirror(env, pid)).toBe(expected);
  });
});

describe('managerConfig', () => {
  const manager: ManagerOptions = {
    port: 19002,
    host: undefined,
    readyTimeout: 70_000,
    readyFile: '/tmp/shutdown-ready',
    maxWaiters: 1000,
    requestTimeout: 10_000,
    drainStartTimeout: 15_000,
    drainEndpoint: false,
    events: false,
    finalScrapeTimeout: 0,
    terminationGracePeriod: undefined,
  };

  it('accepts a ready timeout longer than the drain timeout in the environment', () => {
    expect(managerConfig(manager, { ENVOY_SHUTDOWN_DRAIN_TIMEOUT: '60s' }).readyTimeoutMs).toBe(70_000);
  });
  it('accepts any ready timeout when the drain timeout is not in the environment', () => {
    expect(managerConfig({ ...manager, readyTimeout: 1_000 }, {}).readyTimeoutMs).toBe(1_000);
  });
  it.each([
    [{ ENVOY_SHUTDOWN_DRAIN_TIMEOUT: '70s' }, /must be longer than the drain timeout ENVOY_SHUTDOWN_DRAIN_TIMEOUT=70s/],
    [{ ENVOY_SHUTDOWN_DRAIN_TIMEOUT: '2m' }, /must be longer than the drain timeout/],
    [{ ENVOY_SHUTDOWN_DRAIN_TIMEOUT: 'soon' }, /ENVOY_SHUTDOWN_DRAIN_TIMEOUT: "soon" is not a duration/],
  ])('refuses %j', (env, message) => {
    expect(() => managerConfig(manager, env)).toThrow(message);
  });
  it('stays for the final scrape only when its timeout is set, with the grace period when given', () => {
    expect(managerConfig(manager, {}).finalScrape).toBeUndefined();
    expect(managerConfig({ ...manager, finalScrapeTimeout: 20_000 }, {}).finalScrape).toEqual({ timeoutMs: 20_000, gracePeriodMs: undefined });
    expect(managerConfig({ ...manager, finalScrapeTimeout: 20_000, terminationGracePeriod: 90_000 }, {}).finalScrape).toEqual({
      timeoutMs: 20_000,
      gracePeriodMs: 90_000,
    });
  });
  it('refuses a final scrape timeout the grace period does not leave room for', () => {
    expect(() => managerConfig({ ...manager, terminationGracePeriod: 90_000, finalScrapeTimeout: 90_000 }, {})).toThrow(
      /--final-scrape-timeout \(1m30s\) must be shorter than --termination-grace-period \(1m30s\)/,
    );
  });
});
