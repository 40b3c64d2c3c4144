// Reading the files other processes leave beside the ready file: bounded, never blocking, and a
// drain marker's pid trusted only when it names the process that wrote it.
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { type DrainInProgress, readDrainState, writeDrainState } from '../../../src/handoff/drain-state.js';
import { envoyPrestopRecordPath, readEnvoyPrestop } from '../../../src/handoff/envoy-prestop.js';
import { MAX_READY_FILE_BYTES, readReadyReport } from '../../../src/handoff/ready-file.js';
import { DrainWatchdog, type NoDrain } from '../../../src/manager/drain-watchdog.js';
import { LogSummary } from '../../../src/manager/log-summary.js';
import type { Logger } from '../../../src/shared/log.js';
import { ownIdentity, parseStartTime } from '../../../src/shared/process-identity.js';
import { tempDir } from '../../support/cli.js';

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

function path(name: string): string {
  const dir = tempDir();
  cleanups.push(dir.cleanup);
  return join(dir.path, name);
}

const report = { result: 'drained', connections: 0, elapsedMs: 10, exitCode: 0, finishedAt: 'now' };

describe('readReadyReport reads only what a report needs', () => {
  it('reads a report', async () => {
    const ready = path('ready');
    writeFileSync(ready, `${JSON.stringify(report)}\n`);
    expect(await readReadyReport(ready)).toEqual(report);
  });

  it('takes a file larger than any report for "not a report", without reading it all', async () => {
    const ready = path('ready');
    // Valid JSON followed by padding: a whole-file read would parse it.
    writeFileSync(ready, `${JSON.stringify(report)}${' '.repeat(MAX_READY_FILE_BYTES)}`);
    expect(await readReadyReport(ready)).toBe('unreadable');
  });

  it('does not block on a FIFO at the path', async () => {
    const ready = path('ready');
    expect(spawnSync('mkfifo', [ready]).status).toBe(0);
    expect(await readReadyReport(ready)).toBe('unreadable');
  });

  it('absent is absent', async () => {
    expect(await readReadyReport(path('ready'))).toBeUndefined();
  });
});

describe("the record of Envoy's preStop is read bounded too", () => {
  it('a record padded past 1 KiB is no record', async () => {
    const ready = path('ready');
    const at = new Date().toISOString();
    writeFileSync(envoyPrestopRecordPath(ready), JSON.stringify({ at }));
    expect(await readEnvoyPrestop(ready)).toBe(Date.parse(at));
    writeFileSync(envoyPrestopRecordPath(ready), `${JSON.stringify({ at })}${' '.repeat(2_000)}`);
    expect(await readEnvoyPrestop(ready)).toBeUndefined();
  });
});

describe('readDrainState trusts a pid only with its start time', () => {
  const state = (pid: number, pidStartTime?: string): DrainInProgress => ({
    pid,
    ...(pidStartTime === undefined ? {} : { pidStartTime }),
    startedAt: new Date().toISOString(),
    startedBy: 'hook',
    phase: 'draining',
    minDrainMs: 1,
    drainTimeoutMs: 2,
    quietPeriodMs: 0,
  });

  it('running: the very process that wrote it', async () => {
    const ready = path('ready');
    const self = ownIdentity();
    expect(self.startTime).toMatch(/^\d+$/);
    writeDrainState(ready, state(self.pid, self.startTime));
    expect(await readDrainState(ready)).toMatchObject({ kind: 'running' });
  });

  it.each([
    ['no start time', undefined],
    ['another start time', '1'],
  ])('abandoned: a live pid with %s', async (_what, startTime) => {
    const ready = path('ready');
    writeDrainState(ready, state(process.pid, startTime));
    expect(await readDrainState(ready)).toMatchObject({ kind: 'abandoned', why: 'pid reused or unverifiable' });
  });

  it('abandoned: a pid nothing runs under', async () => {
    const ready = path('ready');
    writeDrainState(ready, state(2 ** 22 + 1, '5'));
    expect(await readDrainState(ready)).toMatchObject({ kind: 'abandoned', why: 'process gone' });
  });

  it('none without a file; unreadable for garbage or a huge file', async () => {
    const ready = path('ready');
    expect(await readDrainState(ready)).toEqual({ kind: 'none' });
    writeFileSync(`${ready}.draining`, 'not json');
    expect(await readDrainState(ready)).toEqual({ kind: 'unreadable' });
    writeFileSync(`${ready}.draining`, `${JSON.stringify(state(process.pid))}${' '.repeat(10_000)}`);
    expect(await readDrainState(ready)).toEqual({ kind: 'unreadable' });
  });

  it('parses the start time after the command name, whatever that holds', () => {
    const rest = 'S 1 1 1 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 10';
    expect(parseStartTime(`42 (node) ${rest}`)).toBe('987654');
    expect(parseStartTime(`42 (a) b (c) ${rest}`)).toBe('987654');
    expect(parseStartTime('garbage')).toBeUndefined();
  });
});

describe('a waiter that leaves leaves nothing behind', () => {
  it('the watchdog gives up on behalf of the watchers still there, never of one that left', async () => {
    const watchdog = new DrainWatchdog(path('ready'), 1);
    const left = vi.fn();
    for (let i = 0; i < 1_000; i += 1) watchdog.watch(left)();
    const gaveUp = new Promise<NoDrain>((resolve) => watchdog.watch(resolve));
    expect(await gaveUp).toEqual({ kind: 'never-started' });
    expect(left).not.toHaveBeenCalled();
  });

  it('the watchdog holds no timer once its last watcher has left', () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const watchdog = new DrainWatchdog(path('ready'), 60_000);
      const held = watchdog.watch(() => undefined);
      for (let i = 0; i < 1_000; i += 1) watchdog.watch(() => undefined)();
      expect(vi.getTimerCount()).toBe(1);
      held();
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('LogSummary', () => {
  it('logs the first event at once and the rest as one line with how many it stands for', () => {
    const lines: Array<{ level: string; fields: Record<string, unknown>; msg: string }> = [];
    const at = (level: string) => (fields: Record<string, unknown>, msg: string) => lines.push({ level, fields, msg });
    const log = { info: at('info'), warn: at('warn'), error: at('error') } as unknown as Logger;
    const summary = new LogSummary(log, 60_000);
    for (let i = 1; i <= 1_000; i += 1) summary.event('info', { waiting: i }, 'waiting');
    summary.event('warn', { waiting: 1_000 }, 'refused');
    expect(lines).toEqual([
      { level: 'info', fields: { waiting: 1 }, msg: 'waiting' },
      { level: 'warn', fields: { waiting: 1_000 }, msg: 'refused' },
    ]);
    summary.flush();
    expect(lines.slice(2)).toEqual([{ level: 'info', fields: { waiting: 1_000, repeated: 999 }, msg: 'waiting' }]);
    summary.flush();
    expect(lines).toHaveLength(3);
  });
});
