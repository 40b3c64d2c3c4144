import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { NoDrain } from '../../../src/manager/drain-watchdog.js';
import { LogSummary } from '../../../src/manager/log-summary.js';
import type { ReadyContent } from '../../../src/manager/ready-watch.js';
import { Waiters } from '../../../src/manager/waiters.js';
import type { LogFields, Logger } from '../../../src/shared/log.js';

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

/** The parts of a ServerResponse the waiters use; `close()` is Node's 'close': bytes out, or the client gone. */
class FakeResponse extends EventEmitter {
  destroyed = false;
  readonly req = { method: 'GET', socket: { remoteAddress: '127.0.0.1' } };
  status: number | undefined;
  headers: readonly string[] | undefined;
  body: string | undefined;
  writeHead(status: number, headers: readonly string[]): this {
    this.status = status;
    this.headers = headers;
    return this;
  }
  end(body?: string): this {
    this.body = body;
    return this;
  }
  close(): void {
    this.emit('close');
  }
  get response(): ServerResponse {
    return this as unknown as ServerResponse;
  }
}

const report = { result: 'drained', connections: 0, elapsedMs: 10, exitCode: 0, finishedAt: 'now' } as const;

function setup({ readyTimeoutMs = Number.POSITIVE_INFINITY } = {}) {
  const lines: Array<{ level: string; msg: string; fields: LogFields }> = [];
  const at = (level: string) => (fields: LogFields | string, msg?: string) =>
    typeof fields === 'string' ? lines.push({ level, msg: fields, fields: {} }) : lines.push({ level, msg: msg ?? '', fields });
  const log: Logger = { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error'), child: () => log };
  const summary = new LogSummary(log);
  const readyWaits: Array<{ signal: AbortSignal; resolve: (content: ReadyContent | undefined) => void; promise: Promise<ReadyContent | undefined> }> = [];
  const watches: Array<{ giveUp: (noDrain: NoDrain) => void; unwatched: boolean }> = [];
  const prestop: boolean[] = [];
  const done: string[] = [];
  const waiters = new Waiters({
    readyTimeoutMs,
    drainStartTimeoutMs: 15_000,
    okBody: undefined,
    summary,
    now: () => Date.now(),
    onEnvoyPrestop: (waiting) => prestop.push(waiting),
    onDone: (how) => done.push(how),
    readyWatch: {
      wait: (signal) => {
        let resolve: (content: ReadyContent | undefined) => void = () => undefined;
        const promise = new Promise<ReadyContent | undefined>((r) => (resolve = r));
        readyWaits.push({ signal, resolve, promise });
        return promise;
      },
    },
    watchdog: {
      watch: (giveUp) => {
        const watch = { giveUp, unwatched: false };
        watches.push(watch);
        return () => (watch.unwatched = true);
      },
    },
  });
  const arrive = (envoyPrestop = true): FakeResponse => {
    const response = new FakeResponse();
    waiters.add(response.response, envoyPrestop);
    return response;
  };
  /** Timers still armed, not counting the log summary's. */
  const timers = (): number => {
    summary.flush();
    return vi.getTimerCount();
  };
  return { waiters, lines, readyWaits, watches, prestop, done, arrive, timers };
}

describe('Waiters', () => {
  it('one release answers the whole crowd with one answer built once, logs one line, and counts each done at its close', async () => {
    const { waiters, lines, readyWaits, watches, prestop, done, arrive } = setup();
    const crowd = [arrive(true), arrive(false), arrive(true)];
    expect(readyWaits).toHaveLength(1); // one shared wait for the file
    expect(watches).toHaveLength(1); // one watchdog watch
    expect(prestop).toEqual([true]);
    readyWaits[0]?.resolve(report);
    await readyWaits[0]?.promise;
    expect(crowd.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(JSON.parse(crowd[0]?.body ?? '')).toEqual(report);
    expect(crowd[1]?.headers).toBe(crowd[0]?.headers);
    expect(crowd[2]?.body).toBe(crowd[0]?.body);
    expect(lines.filter((l) => l.msg === 'drain finished: releasing envoy')).toMatchObject([{ level: 'info', fields: { waiters: 3, result: 'drained' } }]);
    expect(waiters.waiting).toBe(0);
    expect(readyWaits[0]?.signal.aborted).toBe(true);
    expect(watches[0]?.unwatched).toBe(true);
    // Counted as done only once each answer's bytes are out.
    expect(waiters.pending).toBe(3);
    for (const response of crowd) response.close();
    expect(waiters.pending).toBe(0);
    expect(done).toEqual(['answered', 'answered', 'answered']);
    expect(prestop).toEqual([true, false]);
  });

  it('holds one --ready-timeout timer for the crowd: each waiter times out at its own deadline', () => {
    const { waiters, lines, arrive, timers } = setup({ readyTimeoutMs: 1_000 });
    const first = arrive();
    vi.advanceTimersByTime(400);
    const second = arrive();
    expect(timers()).toBe(1);
    vi.advanceTimersByTime(600);
    expect(first.status).toBe(500);
    expect(first.body).toBe('ready file did not appear within 1s\n');
    expect(second.status).toBeUndefined();
    expect(lines.find((l) => l.level === 'error')).toMatchObject({ fields: { waiters: 1, readyTimeout: '1s' } });
    vi.advanceTimersByTime(399);
    expect(second.status).toBeUndefined();
    vi.advanceTimersByTime(1);
    expect(second.status).toBe(500);
    expect(waiters.waiting).toBe(0);
    expect(timers()).toBe(0);
  });

  it('forgets a waiter that goes away at once; with the last one the shared wait, watch and timer stop', () => {
    const { waiters, lines, readyWaits, watches, prestop, done, arrive, timers } = setup({ readyTimeoutMs: 60_000 });
    const first = arrive();
    const second = arrive();
    first.close();
    expect(waiters.waiting).toBe(1);
    expect(waiters.pending).toBe(1);
    expect(lines.some((l) => l.msg === 'waiter went away')).toBe(true);
    expect(readyWaits[0]?.signal.aborted).toBe(false);
    second.close();
    expect(waiters.pending).toBe(0);
    expect(readyWaits[0]?.signal.aborted).toBe(true);
    expect(watches[0]?.unwatched).toBe(true);
    expect(timers()).toBe(0);
    expect(done).toEqual(['gone', 'gone']);
    expect(prestop).toEqual([true, false]);
    // The next waiter starts afresh.
    arrive();
    expect(readyWaits).toHaveLength(2);
    expect(watches).toHaveLength(2);
  });

  it('releases everyone with 500 when the watchdog gives up, saying why in one line', () => {
    const { lines, watches, arrive } = setup();
    const crowd = [arrive(), arrive()];
    watches[0]?.giveUp({ kind: 'never-started' });
    expect(crowd.map((r) => [r.status, r.body])).toEqual([
      [500, 'no drain started: released undrained\n'],
      [500, 'no drain started: released undrained\n'],
    ]);
    expect(lines.filter((l) => l.level === 'error')).toMatchObject([{ fields: { waiters: 2, kind: 'never-started', drainStartTimeout: '15s' } }]);
  });

  it('answers everyone when the manager stops, and any later arrival at once', () => {
    const { waiters, arrive } = setup();
    const held = arrive();
    waiters.stop(undefined);
    expect([held.status, held.body]).toEqual([500, 'manager stopping before the ready file appeared: released undrained\n']);
    const late = arrive();
    expect(late.status).toBe(500);
    expect(waiters.waiting).toBe(0);
  });

  it('answers with the report when the file was there at the stop', () => {
    const { waiters, arrive } = setup();
    const held = arrive();
    waiters.stop(report);
    expect(held.status).toBe(200);
    expect(JSON.parse(held.body ?? '')).toEqual(report);
  });
});
