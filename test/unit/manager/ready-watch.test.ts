import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ReadyWatch } from '../../../src/manager/ready-watch.js';
import { writeReadyFile } from '../../../src/handoff/ready-file.js';
import { tempDir } from '../../support/cli.js';

const HOUR = 3_600_000;
const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

function setup(options: ConstructorParameters<typeof ReadyWatch>[1]): { watch: ReadyWatch; path: string } {
  const dir = tempDir();
  const path = join(dir.path, 'ready');
  const watch = new ReadyWatch(path, options);
  cleanups.push(() => watch.close(), dir.cleanup);
  return { watch, path };
}

const report = { result: 'drained', connections: 0, elapsedMs: 10, exitCode: 0, finishedAt: 'now' } as const;

describe('ReadyWatch', () => {
  it('is woken by the directory watch alone (the poll is an hour away)', async () => {
    const { watch, path } = setup({ pollIntervalMs: HOUR });
    const waiters = Array.from({ length: 1_000 }, () => watch.wait(new AbortController().signal));
    expect(watch.waiting).toBe(1_000);
    await new Promise((resolve) => setTimeout(resolve, 50));
    await writeReadyFile(path, report);
    const contents = await Promise.all(waiters);
    expect(contents.every((c) => typeof c === 'object' && c.result === 'drained')).toBe(true);
    expect(watch.waiting).toBe(0);
  });

  it('falls back to polling when the filesystem sends no events', async () => {
    const { watch, path } = setup({ pollIntervalMs: 20, useEvents: false });
    const waiting = watch.wait(new AbortController().signal);
    await new Promise((resolve) => setTimeout(resolve, 50));
    writeFileSync(path, 'not a report');
    expect(await waiting).toBe('unreadable');
  });

  it('answers at once when the file is already there', async () => {
    const { watch, path } = setup({ pollIntervalMs: HOUR, useEvents: false });
    await writeReadyFile(path, report);
    expect(await watch.wait(new AbortController().signal)).toEqual(report);
  });

  it('forgets an aborted waiter at once and keeps the others', async () => {
    const { watch, path } = setup({ pollIntervalMs: HOUR });
    const leaving = new AbortController();
    const gone = watch.wait(leaving.signal);
    const staying = watch.wait(new AbortController().signal);
    leaving.abort();
    expect(await gone).toBeUndefined();
    expect(watch.waiting).toBe(1);
    await writeReadyFile(path, report);
    expect(await staying).toEqual(report);
  });

  it('ignores other files in the directory', async () => {
    const { watch, path } = setup({ pollIntervalMs: HOUR });
    const controller = new AbortController();
    const waiting = watch.wait(controller.signal);
    writeFileSync(`${path}-other`, '');
    mkdirSync(join(path, '..', 'sub'));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(watch.waiting).toBe(1);
    controller.abort();
    expect(await waiting).toBeUndefined();
  });
});
