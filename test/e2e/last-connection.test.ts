// The drain's report says when the reads began to find the count at its target: real Envoy, one
// idle connection closed in the middle of the drain. The reference's example holds the same fields.
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanEnv, startCli } from '../support/cli.js';
import { idleHttp1 } from '../support/protocols/clients.js';
import { realEnvoyAndReadyFile } from '../support/real-envoy/drain-target.js';

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('lastConnectionMs in the ready file', () => {
  it('is when a read first saw the count at its target: after the last connection closed, before the drain ended', async () => {
    const { envoy, ready } = await realEnvoyAndReadyFile((cleanup) => cleanups.push(cleanup));
    const idle = await idleHttp1(envoy.listenerPort('ingress'));
    cleanups.push(() => idle.close());
    const hook = startCli(
      [
        'shutdown',
        '--admin-address',
        envoy.adminAddress,
        '--ready-file',
        ready,
        '--connections',
        'listeners',
        '--ignore-listener',
        'stats',
        '--ignore-listener',
        'ready',
        '--min-drain-duration',
        '200ms',
        '--drain-timeout',
        '10s',
        '--check-interval',
        '100ms',
      ],
      cleanEnv(),
    );
    cleanups.push(() => {
      hook.child.kill('SIGKILL');
      return hook.result.catch(() => undefined);
    });
    // Held by the idle connection past the minimum drain; then it closes.
    const held = await hook.waitForLog((line) => line.msg === 'draining' && line.connections === 1 && Number(line.elapsedMs) >= 200);
    await idle.close();
    expect((await hook.result).code).toBe(0);
    const report = JSON.parse(readFileSync(ready, 'utf8')) as { result: string; elapsedMs: number; lastConnectionMs?: number };
    expect(report.result).toBe('drained');
    expect(report.lastConnectionMs).toBeGreaterThan(Number(held.elapsedMs));
    expect(report.lastConnectionMs).toBeLessThanOrEqual(report.elapsedMs);
    const example = /^\s*(\{"result":"drained".*\})$/m.exec(readFileSync('docs/reference.md', 'utf8'))?.[1];
    expect(Object.keys(JSON.parse(example ?? '{}') as object)).toEqual(Object.keys(report));
  });

  it('is absent when the drain timed out', async () => {
    const { envoy, ready } = await realEnvoyAndReadyFile((cleanup) => cleanups.push(cleanup));
    const idle = await idleHttp1(envoy.listenerPort('ingress'));
    cleanups.push(() => idle.close());
    const run = await startCli(
      [
        'shutdown',
        '--admin-address',
        envoy.adminAddress,
        '--ready-file',
        ready,
        '--connections',
        'listeners',
        '--ignore-listener',
        'stats',
        '--ignore-listener',
        'ready',
        '--min-drain-duration',
        '100ms',
        '--drain-timeout',
        '600ms',
        '--check-interval',
        '100ms',
      ],
      cleanEnv(),
    ).result;
    expect(run.code).toBe(3);
    expect(JSON.parse(readFileSync(ready, 'utf8'))).not.toHaveProperty('lastConnectionMs');
  });
});
