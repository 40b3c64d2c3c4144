// The quick parse of `shutdown` and `shutdown-manager` against commander itself: for every command
// line it takes, it hands the action exactly what commander would; everything else it leaves to
// commander.
import { afterEach, describe, expect, it } from 'vitest';
import { buildProgram } from '../../../src/cli/program.js';
import { MANAGER_OPTIONS } from '../../../src/cli/manager-options.js';
import { quickParse, type ParsedCommand } from '../../../src/cli/quick-parse.js';
import { SHUTDOWN_OPTIONS, attributeOf } from '../../../src/cli/shutdown-options.js';

const ATTRIBUTES = [...new Set([...Object.values(SHUTDOWN_OPTIONS), ...MANAGER_OPTIONS].map((spec) => attributeOf(spec.flags)))];
const saved = { ...process.env };
afterEach(() => {
  for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key];
  Object.assign(process.env, saved);
});

async function viaCommander(args: readonly string[]): Promise<ParsedCommand<unknown> & { command: string }> {
  let parsed: (ParsedCommand<unknown> & { command: string }) | undefined;
  const program = buildProgram(() => undefined, {
    shutdown: (given) => {
      parsed = { ...given, command: 'shutdown' };
      return Promise.resolve(0);
    },
    manager: (given) => {
      parsed = { ...given, command: 'shutdown-manager' };
      return Promise.resolve(0);
    },
  });
  await program.parseAsync(args, { from: 'user' });
  if (parsed === undefined) throw new Error('commander did not reach an action');
  return parsed;
}

/** What the actions can observe of a parse. */
function observed(parsed: ParsedCommand<unknown> & { command: string }): unknown {
  return {
    command: parsed.command,
    options: parsed.options,
    sources: Object.fromEntries(ATTRIBUTES.map((key) => [key, parsed.sourceOf(key)])),
    // Only shutdown's action reads it.
    seen: parsed.command === 'shutdown' ? ['ready-file', 'no-ready-file'].filter((flag) => parsed.seen.has(flag)) : [],
    log: [parsed.logLevel, parsed.logFormat],
  };
}

const ENV = {
  ENVOY_SHUTDOWN_DRAIN_TIMEOUT: '30s',
  ENVOY_SHUTDOWN_IGNORE_LISTENERS: 'stats,ready',
  ENVOY_SHUTDOWN_REQUIRE_ENVOY_PRESTOP: 'true',
  ENVOY_SHUTDOWN_READY_FILE: '/tmp/elsewhere',
  ENVOY_SHUTDOWN_LOG_LEVEL: 'debug',
  ENVOY_SHUTDOWN_LOG_FORMAT: 'text',
  ENVOY_SHUTDOWN_PORT: '19100',
  ENVOY_SHUTDOWN_HOST: '::1',
  ENVOY_SHUTDOWN_DRAIN_ENDPOINT: 'false',
};

describe('quick parse', () => {
  it.each<[string[], Record<string, string>]>([
    [['shutdown'], {}],
    [['shutdown'], ENV],
    [['shutdown', '--require-envoy-prestop'], {}],
    [['shutdown', '--admin-address', '127.0.0.1:9901', '--ready-file', '/tmp/r', '--min-drain-duration', '0s', '--drain-timeout', '5s'], {}],
    [['shutdown', '--admin-address=unix:/run/envoy/admin.sock', '--connections=listeners', '--check-interval=250ms'], ENV],
    [['shutdown', '--connections', 'listeners', '--ignore-listener', 'stats', '--ignore-listener', 'ready,health'], ENV],
    [['shutdown', '--no-ready-file', '--exit-at-connections', '3'], { ENVOY_SHUTDOWN_READY_FILE: '/tmp/x' }],
    [['shutdown', '--ready-file', '', '--quiet-period', '2s', '--ignore-idle-connections'], {}],
    [['shutdown', '--drain-timeout', '10s', '--drain-timeout', '20s', '--admin-timeout', '1s'], {}],
    [['shutdown', '--require-envoy-prestop', '--envoy-prestop-wait', '3s', '--health-check-failure-delay', '1s'], {}],
    [['shutdown', '--ready-file', '/tmp/a', '--no-ready-file'], {}],
    [['shutdown', '--ignore-listener', 'x'], {}],
    [['shutdown-manager'], {}],
    [['shutdown-manager'], ENV],
    [['shutdown-manager', '--port', '0', '--ready-file', '/tmp/r', '--ready-timeout', '70s', '--drain-start-timeout', '0s'], {}],
    [['shutdown-manager', '--host=127.0.0.1', '--max-waiters=10', '--request-timeout=2s', '--drain-endpoint'], ENV],
    [['shutdown-manager', '--drain-endpoint', '--port', '19002'], {}],
  ])('%j with %j: taken, and equal to commander', async (args, env) => {
    Object.assign(process.env, env);
    const quick = quickParse(args, process.env);
    expect(quick).toBeDefined();
    expect(observed(quick as ParsedCommand<unknown> & { command: string })).toEqual(observed(await viaCommander(args)));
  });

  it.each<[string[], Record<string, string>]>([
    [['shutdown', '--help'], {}],
    [['shutdown', '-h'], {}],
    [['shutdown', '--dry-run'], {}],
    [['shutdown', '--output', 'json'], {}],
    [['--log-level', 'debug', 'shutdown'], {}],
    [['shutdown', '--log-level', 'debug'], {}],
    [['status'], {}],
    [['shutdown', '--bogus'], {}],
    [['shutdown', 'extra'], {}],
    [['shutdown', '--drain-timeout'], {}],
    [['shutdown', '--drain-timeout', '-1s'], {}],
    [['shutdown', '--drain-timeout', 'x'], {}],
    [['shutdown', '--require-envoy-prestop', 'false'], {}],
    [['shutdown', '--require-envoy-prestop=false'], {}],
    [['shutdown', '--no-ready-file=x'], {}],
    [['shutdown', '--', '--drain-timeout', '1s'], {}],
    [['shutdown'], { ENVOY_SHUTDOWN_DRAIN_TIMEOUT: 'zz' }],
    [['shutdown'], { ENVOY_SHUTDOWN_REQUIRE_ENVOY_PRESTOP: '' }],
    [['shutdown'], { ENVOY_SHUTDOWN_LOG_LEVEL: 'loud' }],
    [['shutdown-manager', '--help'], {}],
    [['shutdown-manager', '--port', 'x'], {}],
    [['shutdown-manager', '--drain-endpoint', 'true'], {}],
    [['shutdown-manager', '--admin-address', '127.0.0.1:1'], {}],
    [['shutdown-manager'], { ENVOY_SHUTDOWN_PORT: '70000' }],
  ])('%j with %j: left to commander', (args, env) => {
    Object.assign(process.env, env);
    expect(quickParse(args, process.env)).toBeUndefined();
  });
});
