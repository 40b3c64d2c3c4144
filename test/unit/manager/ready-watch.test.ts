import { mkdirSync, watch as watchDirectory, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { writeReadyFile } from '../../../src/handoff/ready-file.js';
import { ReadyWatch } from '../../../src/manager/ready-watch.js';
import { tempDir } from '../../support/cli.js';

/** Every read of the ready file the watch makes: how many began, and a way to wait until none is in flight. */
const reads = vi.hoisted(() => {
  const state = { started: 0, inFlight: 0, onQuiet: [] as Array<() => void> };
  return {
    state,
    /** Resolves once every read begun so far is over and none follows on from it (a recheck starts in the same turn). */
    quiet: (): Promise<void> =>
      new Promise((resolve) => {
        const check = (): void => {
          if (state.inFlight === 0) setImmediate(() => (state.inFlight === 0 ? resolve() : state.onQuiet.push(check)));
          else state.onQuiet.push(check);
        };
        check();
      }),
  };
});

vi.mock('../../../src/handoff/ready-file.js', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../../../src/handoff/ready-file.js')>();
  return {
    ...actual,
    readReadyReport: async (path: string) => {
      reads.state.started += 1;
      reads.state.inFlight += 1;
      try {
        return await actual.readReadyReport(path);
      } finally {
        reads.state.inFlight -= 1;
        for (const waiting of reads.state.onQuiet.splice(0)) waiting();
      }
    },
  };
});

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
  it('is woken by the directory watch alone (the poll is an hour away), and one read releases everyone', async () => {
    const { watch, path } = setup({ pollIntervalMs: HOUR });
    const waiters = Array.from({ length: 1_000 }, () => watch.wait(new AbortController().signal));
    expect(watch.waiting).toBe(1_000);
    await reads.quiet(); // the looks taken on arrival found nothing: only the watch can see the file now
    const before = reads.state.started;
    writeReadyFile(path, report);
    const contents = await Promise.all(waiters);
    expect(contents.every((c) => typeof c === 'object' && c.result === 'drained')).toBe(true);
    expect(watch.waiting).toBe(0);
    expect(reads.state.started - before).toBe(1);
  });

  it('falls back to polling when the filesystem sends no events', async () => {
    const { watch, path } = setup({ pollIntervalMs: 20, useEvents: false });
    const waiting = watch.wait(new AbortController().signal);
    await reads.quiet(); // the look taken on arrival found nothing: only the poll can see the file now
    writeFileSync(path, 'not a report');
    expect(await waiting).toBe('unreadable');
  });

  it('answers at once when the file is already there', async () => {
    const { watch, path } = setup({ pollIntervalMs: HOUR, useEvents: false });
    writeReadyFile(path, report);
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
    writeReadyFile(path, report);
    expect(await staying).toEqual(report);
  });

  it('ignores other files in the directory', async () => {
    const { watch, path } = setup({ pollIntervalMs: HOUR });
    const controller = new AbortController();
    const waiting = watch.wait(controller.signal);
    await reads.quiet();
    const before = reads.state.started;
    // A watch of our own on the same directory: events reach every watcher of it in the same turn.
    const seen = new Promise<void>((resolve) => {
      const own = watchDirectory(join(path, '..'), (_event, name) => {
        if (name !== 'sub') return;
        own.close();
        setImmediate(resolve); // after the rest of this batch of events has reached the ready watch too
      });
      cleanups.push(() => own.close());
    });
    writeFileSync(`${path}-other`, '');
    mkdirSync(join(path, '..', 'sub'));
    await seen;
    expect(reads.state.started - before).toBe(0);
    expect(watch.waiting).toBe(1);
    controller.abort();
    expect(await waiting).toBeUndefined();
  });
});
