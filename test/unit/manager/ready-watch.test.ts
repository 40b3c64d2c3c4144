import { EventEmitter } from 'node:events';
import { type FSWatcher, mkdirSync, watch as watchDirectory, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { writeReadyFile } from '../../../src/handoff/ready-file.js';
import { READY_POLL_INTERVAL_MS, ReadyWatch } from '../../../src/manager/ready-watch.js';
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

/**
 * What the filesystem's directory watch does: delivers events, opens but stays silent (NFS, some
 * overlay setups) or cannot be opened at all; and how many watches are open.
 */
const directoryWatch = vi.hoisted(() => ({ mode: 'events' as 'events' | 'silent' | 'throws', open: 0 }));

vi.mock('node:fs', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:fs')>();
  const watch = (...args: unknown[]): FSWatcher => {
    if (directoryWatch.mode === 'throws') throw Object.assign(new Error('no inotify here'), { code: 'ENOSYS' });
    const watcher: FSWatcher =
      directoryWatch.mode === 'silent'
        ? (Object.assign(new EventEmitter(), { close: () => undefined, ref: () => watcher, unref: () => watcher }) as unknown as FSWatcher)
        : (Reflect.apply(actual.watch, undefined, args) as FSWatcher);
    directoryWatch.open += 1;
    const close = watcher.close.bind(watcher);
    watcher.close = () => {
      directoryWatch.open -= 1;
      close();
    };
    return watcher;
  };
  return { ...actual, default: { ...actual, watch }, watch };
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

const cleanups: Array<() => void> = [];
beforeEach(() => {
  // The poll's timer is faked: it runs only when a test moves the clock, and a test can see it is gone.
  vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
  directoryWatch.mode = 'events';
});
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
  vi.useRealTimers();
});

function setup(): { watch: ReadyWatch; path: string } {
  const dir = tempDir();
  const path = join(dir.path, 'ready');
  cleanups.push(dir.cleanup);
  return { watch: new ReadyWatch(path), path };
}

const report = { result: 'drained', connections: 0, elapsedMs: 10, exitCode: 0, finishedAt: 'now' } as const;

describe('ReadyWatch', () => {
  it('is woken by the directory watch alone (the poll never runs), and one read releases everyone', async () => {
    const { watch, path } = setup();
    const waiters = Array.from({ length: 1_000 }, () => watch.wait(new AbortController().signal));
    await reads.quiet(); // the looks taken on arrival found nothing: only the watch can see the file now
    const before = reads.state.started;
    writeReadyFile(path, report);
    const contents = await Promise.all(waiters);
    expect(contents.every((c) => typeof c === 'object' && c.result === 'drained')).toBe(true);
    expect(reads.state.started - before).toBe(1);
    expect({ polls: vi.getTimerCount(), watches: directoryWatch.open }).toEqual({ polls: 0, watches: 0 });
  });

  it.each(['silent', 'throws'] as const)('falls back to polling when the directory watch is %s', async (mode) => {
    directoryWatch.mode = mode;
    const { watch, path } = setup();
    const waiting = watch.wait(new AbortController().signal);
    await reads.quiet(); // the look taken on arrival found nothing: only the poll can see the file now
    writeFileSync(path, 'not a report');
    await vi.advanceTimersByTimeAsync(READY_POLL_INTERVAL_MS);
    expect(await waiting).toBe('unreadable');
  });

  it('answers at once when the file is already there', async () => {
    directoryWatch.mode = 'silent';
    const { watch, path } = setup();
    writeReadyFile(path, report);
    expect(await watch.wait(new AbortController().signal)).toEqual(report);
  });

  it('forgets an aborted waiter at once and keeps the others', async () => {
    const { watch, path } = setup();
    const leaving = new AbortController();
    const gone = watch.wait(leaving.signal);
    const staying = watch.wait(new AbortController().signal);
    leaving.abort();
    expect(await gone).toBeUndefined();
    writeReadyFile(path, report);
    expect(await staying).toEqual(report);
  });

  it('stops its poll and its directory watch once the last waiter leaves', async () => {
    const { watch } = setup();
    const controllers = [new AbortController(), new AbortController()];
    const waiting = controllers.map((c) => watch.wait(c.signal));
    expect({ polls: vi.getTimerCount(), watches: directoryWatch.open }).toEqual({ polls: 1, watches: 1 });
    controllers[0]?.abort();
    expect({ polls: vi.getTimerCount(), watches: directoryWatch.open }).toEqual({ polls: 1, watches: 1 });
    controllers[1]?.abort();
    expect(await Promise.all(waiting)).toEqual([undefined, undefined]);
    expect({ polls: vi.getTimerCount(), watches: directoryWatch.open }).toEqual({ polls: 0, watches: 0 });
  });

  it('ignores other files in the directory', async () => {
    const { watch, path } = setup();
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
    controller.abort();
    expect(await waiting).toBeUndefined();
  });
});
