// How the executable behaves as a process: signals from the first moment, output to a reader
// that went away, and a bare invocation.
import { spawn } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BIN, cleanEnv, runCli, startCli, tempDir } from '../support/cli.js';
import { realEnvoyAndReadyFile } from '../support/real-envoy/drain-target.js';

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Spawns the executable with stdout and/or stderr closed before it writes a byte. */
function withClosedOutput(args: string[], close: Array<'stdout' | 'stderr'>, env = cleanEnv()): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(BIN, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  for (const name of close) child[name].destroy();
  if (!close.includes('stderr')) child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stderr })));
}

describe('signals', () => {
  it('catches SIGTERM before the CLI is loaded (as PID 1 an uncaught signal is dropped)', async () => {
    const dir = tempDir();
    cleanups.push(dir.cleanup);
    // Reports, when the first SIGTERM handler is installed, whether Node's HTTP module (loaded by the CLI) is loaded yet.
    const probe = join(dir.path, 'probe.cjs');
    writeFileSync(
      probe,
      `const on = process.on;
      process.on = function (event, listener) {
        const result = on.call(this, event, listener);
        if (event === 'SIGTERM' && !process.__probed) {
          process.__probed = true;
          require('node:fs').writeSync(2, 'sigterm handler, http loaded: ' + process.moduleLoadList.includes('NativeModule http') + '\\n');
        }
        return result;
      };`,
    );
    const cli = startCli(['shutdown-manager', '--port', '0', '--ready-file', join(dir.path, 'ready')], cleanEnv({ NODE_OPTIONS: `--require ${probe}` }));
    cleanups.push(() => {
      cli.child.kill('SIGKILL');
      return cli.result;
    });
    // The moment the handler exists, SIGTERM: held until the manager can act on it, never lost.
    await new Promise<void>((resolve) => {
      let seen = '';
      cli.child.stderr?.on('data', (chunk: Buffer) => {
        seen += chunk.toString();
        if (seen.includes('\n')) resolve();
      });
    });
    cli.child.kill('SIGTERM');
    const result = await cli.result;
    expect(result.stderr).toBe('sigterm handler, http loaded: false\n');
    expect(result.signal).toBeNull();
    expect(result.code).toBe(0);
    expect(result.logs.at(-1)).toMatchObject({ msg: 'shutdown manager stopped', exitCode: 0 });
  });
});

describe('closed output', () => {
  it('`--help | head`: a closed stdout ends the output quietly, exit 0', async () => {
    for (const args of [['--help'], ['shutdown-manager', '--help'], ['shutdown', '--help']]) {
      const result = await withClosedOutput(args, ['stdout']);
      expect(result, args.join(' ')).toEqual({ code: 0, stderr: '' });
    }
  });

  it('a usage error with stderr closed still exits 2', async () => {
    expect((await withClosedOutput(['shutdown', '--bogus'], ['stderr'])).code).toBe(2);
  });

  it('a drain whose log reader went away still drains and writes the ready file', async () => {
    const { envoy, ready } = await realEnvoyAndReadyFile((cleanup) => cleanups.push(cleanup));
    const result = await withClosedOutput(['shutdown', '--admin-address', envoy.adminAddress, '--ready-file', ready, '--min-drain-duration', '0s'], ['stdout']);
    expect(result).toEqual({ code: 0, stderr: '' });
    expect(existsSync(ready)).toBe(true);
  });
});

describe('no arguments', () => {
  it('prints a short usage naming the subcommands and --help, exit 2', async () => {
    const result = await runCli([]);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    const lines = result.stderr.trimEnd().split('\n');
    expect(lines.length).toBeLessThanOrEqual(6);
    expect(result.stderr).toMatch(/^usage: envoy-shutdown-manager <command>/);
    for (const text of ['shutdown ', 'shutdown-manager', '--help']) expect(result.stderr).toContain(text);
  });
});
