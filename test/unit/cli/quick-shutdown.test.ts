// The quick `shutdown` parser against commander itself: for every command line it takes, it hands
// the action exactly what commander would; everything else it leaves to commander.
import { afterEach, describe, expect, it } from 'vitest';
import { buildProgram } from '../../../src/cli/program.js';
import { quickShutdown } from '../../../src/cli/quick-shutdown.js';
import type { ParsedShutdown } from '../../../src/cli/shutdown-action.js';
import { SHUTDOWN_OPTIONS, attributeOf } from '../../../src/cli/shutdown-options.js';

const ATTRIBUTES = [...new Set(Object.values(SHUTDOWN_OPTIONS).map((spec) => attributeOf(spec.flags)))];
const saved = { ...process.env };
afterEach(() => {
  for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key];
  Object.assign(process.env, saved);
});

async function viaCommander(args: readonly string[]): Promise<ParsedShutdown> {
  let parsed: ParsedShutdown | undefined;
  const program = buildProgram(
    () => undefined,
    (given) => {
      parsed = given;
      return Promise.resolve(0);
    },
  );
  await program.parseAsync(args, { from: 'user' });
  if (parsed === undefined) throw new Error('commander did not reach the shutdown action');
  return parsed;
}

/** What the action can observe of a parse. */
function observed(parsed: ParsedShutdown): unknown {
  return {
    options: parsed.options,
    sources: Object.fromEntries(ATTRIBUTES.map((key) => [key, parsed.sourceOf(key)])),
    seen: ['ready-file', 'no-ready-file'].filter((flag) => parsed.seen.has(flag)),
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
};

describe('quick shutdown parse', () => {
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
  ])('%j with %j: taken, and equal to commander', async (args, env) => {
    Object.assign(process.env, env);
    const quick = quickShutdown(args, process.env);
    expect(quick).toBeDefined();
    expect(observed(quick as ParsedShutdown)).toEqual(observed(await viaCommander(args)));
  });

  it.each<[string[], Record<string, string>]>([
    [['shutdown', '--help'], {}],
    [['shutdown', '-h'], {}],
    [['shutdown', '--dry-run'], {}],
    [['shutdown', '--output', 'json'], {}],
    [['--log-level', 'debug', 'shutdown'], {}],
    [['shutdown', '--log-level', 'debug'], {}],
    [['shutdown-manager'], {}],
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
  ])('%j with %j: left to commander', (args, env) => {
    Object.assign(process.env, env);
    expect(quickShutdown(args, process.env)).toBeUndefined();
  });
});
