// The waits between the drain's reads, on a fake clock: what wakes the drain and when, and what
// the reads are charged.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { DrainDeps, DrainOptions } from '../../../src/drain/drain.js';
import { INITIAL_STATE } from '../../../src/drain/progress.js';
import { Reads } from '../../../src/drain/reads.js';
import type { NextRead, ReadReason } from '../../../src/drain/schedule.js';
import type { SocketCounts } from '../../../src/envoy/socket-watch.js';
import type { Logger } from '../../../src/shared/log.js';

const OPTIONS: DrainOptions = {
  minDrainMs: 1_000,
  drainTimeoutMs: 60_000,
  exitAtConnections: 0,
  checkIntervalMs: 1_000,
  quietPeriodMs: 0,
  healthCheckFailureDelayMs: 0,
  adminTimeoutMs: 2_000,
  connections: 'listeners',
  ignoreIdleConnections: false,
};

const silent: Logger = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined, child: () => silent };

/** Reads on a drain clock that started now; the pod's sockets as `sockets` says (undefined: unreadable). */
function reads(sockets: { tcp: number | undefined }, priceMs = 2): Reads {
  const startedAt = Date.now();
  const deps: DrainDeps = {
    envoy: {
      failHealthCheck: () => Promise.resolve(),
      startGracefulDrain: () => Promise.resolve(),
      readConnections: () => Promise.resolve({ connections: 1, read: { path: '/stats?usedonly&filter=x', priceMs } }),
      nextReadPriceMs: () => priceMs,
      readServerState: () => Promise.resolve('DRAINING'),
    },
    log: silent,
    signal: new AbortController().signal,
    sockets: {
      sample: (): SocketCounts | undefined => (sockets.tcp === undefined ? undefined : { tcp: sockets.tcp, tcp6: 0, timeWait: 0 }),
      get offReason() {
        return sockets.tcp === undefined ? 'gone' : undefined;
      },
    },
  };
  return new Reads(OPTIONS, deps, () => Date.now() - startedAt);
}

/** When `waitFor` resolved, in fake milliseconds from now, and why. */
async function timedWait(from: Reads, next: NextRead): Promise<{ afterMs: number; why: ReadReason | undefined }> {
  const start = Date.now();
  let woke: ReadReason | undefined | 'pending' = 'pending';
  void from.waitFor(next).then((why) => (woke = why));
  while (woke === 'pending') await vi.advanceTimersByTimeAsync(1);
  return { afterMs: Date.now() - start, why: woke };
}

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('waiting for the next read', () => {
  it('sleeps until the read is due, and says why it comes', async () => {
    expect(await timedWait(reads({ tcp: 5 }), { atMs: 300, why: 'cadence' })).toEqual({ afterMs: 300, why: 'cadence' });
  });

  it('a socket fewer brings the read within one look, no sooner than the earliest moment allowed', async () => {
    const sockets = { tcp: 5 };
    const from = reads(sockets);
    setTimeout(() => (sockets.tcp = 4), 30);
    expect(await timedWait(from, { atMs: 1_000, why: 'end-game', watch: { pollMs: 20, earliestMs: 0 } })).toEqual({ afterMs: 40, why: 'socket-closed' });
    setTimeout(() => (sockets.tcp = 3), 5);
    expect(await timedWait(from, { atMs: 2_000, why: 'end-game', watch: { pollMs: 20, earliestMs: 500 } })).toEqual({
      afterMs: 500 - 40,
      why: 'socket-closed',
    });
  });

  it('a socket opened elsewhere does not hide one closed: the baseline follows the count', async () => {
    const sockets = { tcp: 5 };
    const from = reads(sockets);
    setTimeout(() => (sockets.tcp = 6), 10);
    setTimeout(() => (sockets.tcp = 5), 50);
    expect(await timedWait(from, { atMs: 1_000, why: 'end-game', watch: { pollMs: 20, earliestMs: 0 } })).toEqual({ afterMs: 60, why: 'socket-closed' });
  });

  it('without a close, reads when due', async () => {
    expect(await timedWait(reads({ tcp: 5 }), { atMs: 250, why: 'end-game', watch: { pollMs: 20, earliestMs: 0 } })).toEqual({ afterMs: 250, why: 'end-game' });
  });

  it('an unreadable socket count leaves the read when due', async () => {
    const sockets: { tcp: number | undefined } = { tcp: 5 };
    const from = reads(sockets);
    setTimeout(() => (sockets.tcp = undefined), 30);
    expect(await timedWait(from, { atMs: 400, why: 'end-game', watch: { pollMs: 20, earliestMs: 0 } })).toEqual({ afterMs: 400, why: 'end-game' });
  });
});

describe('what the reads are charged', () => {
  it("charges each read its price, and tells the schedule the next one's", async () => {
    const from = reads({ tcp: 5 }, 7);
    await from.next('first');
    await from.next('cadence');
    expect(from.now(INITIAL_STATE)).toMatchObject({ spentMs: 14, priceMs: 7, socketsReadable: true });
  });
});
