// Our JSON log lines are pino's format: pino's own pretty-printer renders every line of a real
// run with its level, time, message and fields, as it renders pino's.
import { spawnSync } from 'node:child_process';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli, tempDir } from '../support/cli.js';

const PINO_PRETTY = resolve('node_modules/pino-pretty/bin.js');
const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

/** `lines` through pino-pretty, without colours, times in UTC. */
function pretty(lines: string): string {
  const result = spawnSync(process.execPath, [PINO_PRETTY], {
    input: lines,
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '', TZ: 'UTC' },
    timeout: 20_000,
  });
  expect(result.status, result.stderr).toBe(0);
  return result.stdout;
}

describe('log lines through pino-pretty', () => {
  it("render each line of a real drain's log with its level, time, message and fields", async () => {
    const dir = tempDir('esm-pretty-');
    cleanups.push(dir.cleanup);
    // Nothing listens on port 1: the drain cannot start, and logs at info, warn and error on its way out.
    const run = await runCli(['shutdown', '--admin-address', '127.0.0.1:1', '--ready-file', join(dir.path, 'ready')]);
    expect(run.code).toBe(1);
    expect(new Set(run.logs.map((line) => line.level))).toEqual(new Set(['info', 'warn', 'error']));
    const rendered = pretty(run.stdout);
    const blocks = rendered.split(/\n(?=\[)/);
    expect(blocks).toHaveLength(run.logs.length);
    run.logs.forEach((line, index) => {
      const block = blocks[index] ?? '';
      expect(block.split('\n')[0]).toBe(`[${line.time.slice(11, 23)}] ${line.level.toUpperCase()}: ${line.msg}`);
      for (const [key, value] of Object.entries(line)) {
        if (['level', 'time', 'msg'].includes(key) || typeof value === 'object') continue;
        expect(block, key).toContain(`\n    ${key}: ${JSON.stringify(value)}`);
      }
    });
  });
});
