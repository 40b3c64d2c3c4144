// The waits between the drain's reads while the socket-count hint watches, on a fake clock: what
// wakes the drain, and when, counting only requests in flight.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { DrainDeps, DrainOptions } from '../../../src/drain/drain.js';
import { FAST_READ_INTERVAL_MS, HINT_MAX_OVER, HINT_POLL_MS, REQUESTS_END_GAME_MAX_MS } from '../../../src/drain/policy.js';
import { INITIAL_STATE, type DrainState } from '../../../src/drain/progress.js';
import { Reads, type ReadTrigger } from '../../../src/drain/reads.js';
import type { SocketCounts } from '../../../src/envoy/socket-count.js';
import type { Logger } from '../../../src/shared/log.js';

const OPTIONS: DrainOptions = {
  minDrainMs: 1_000,
  drainTimeoutMs: 60_000,
  exitAtConnections: 0,
  checkIntervalMs: 1_000,
  quietPeriodMs: 500,
  healthCheckFailureDelayMs: 0,
  adminTimeoutMs: 2_000,
  connections: 'listeners',
  ignoreIdleConnections: true,
};

const silent: Logger = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined, child: () => silent };

/** A drain past its minimum and quiet period with `inFlight` requests left, the pod's sockets as `sockets` says. */
function drainAt(sockets: { tcp: number }): { reads: Reads; state: DrainState } {
  const startedAt = Date.now() - 5_000;
  const deps: DrainDeps = {
    envoy: {
      failHealthCheck: () => Promise.resolve(),
      startGracefulDrain: () => Promise.resolve(),
      readConnections: () => Promise.resolve({ connections: 8 }),
      readServerState: () => Promise.resolve('DRAINING'),
    },
    log: silent,
    signal: new AbortController().signal,
    sockets: { sample: (): SocketCounts => ({ tcp: sockets.tcp, tcp6: 0 }), offReason: undefined },
  };
  return { reads: new Reads(OPTIONS, deps, () => Date.now() - startedAt), state: { ...INITIAL_STATE, connections: HINT_MAX_OVER + 5, countingRequests: true } };
}

/** When `waitAfter` resolved, in fake milliseconds from now, and why. */
async function timedWait(reads: Reads, state: DrainState): Promise<{ afterMs: number; trigger: ReadTrigger | undefined }> {
  const from = Date.now();
  let woke: ReadTrigger | undefined | 'pending' = 'pending';
  void reads.waitAfter(state).then((trigger) => (woke = trigger));
  while (woke === 'pending') await vi.advanceTimersByTimeAsync(1);
  return { afterMs: Date.now() - from, trigger: woke };
}

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('the hint, counting requests in flight', () => {
  it('watches whatever their number, and a socket fewer brings a read within one look', async () => {
    const sockets = { tcp: 20 };
    const { reads, state } = drainAt(sockets);
    await reads.next('cadence');
    await vi.advanceTimersByTimeAsync(FAST_READ_INTERVAL_MS);
    setTimeout(() => (sockets.tcp = 12), 30);
    const woke = await timedWait(reads, state);
    expect(woke.trigger).toBe('hint');
    expect(woke.afterMs).toBeGreaterThanOrEqual(30);
    expect(woke.afterMs).toBeLessThanOrEqual(30 + HINT_POLL_MS);
  });

  it('without a close, reads at the requests end-game pace', async () => {
    const { reads, state } = drainAt({ tcp: 20 });
    await reads.next('cadence');
    const woke = await timedWait(reads, state);
    expect(woke).toEqual({ afterMs: REQUESTS_END_GAME_MAX_MS, trigger: 'safety-net' });
  });

  it('keeps a stream of closes to the end-game pace: the next hint read waits for its turn', async () => {
    const sockets = { tcp: 20 };
    const { reads, state } = drainAt(sockets);
    await reads.next('cadence');
    await vi.advanceTimersByTimeAsync(FAST_READ_INTERVAL_MS);
    setTimeout(() => (sockets.tcp = 19), 5);
    expect((await timedWait(reads, state)).trigger).toBe('hint');
    await reads.next('hint');
    setTimeout(() => (sockets.tcp = 18), 5); // another socket closed right after the hint's read
    expect(await timedWait(reads, state)).toEqual({ afterMs: REQUESTS_END_GAME_MAX_MS, trigger: 'hint' });
  });

  it('never reads closer than the fast pace to the read before', async () => {
    const sockets = { tcp: 20 };
    const { reads, state } = drainAt(sockets);
    await reads.next('cadence');
    setTimeout(() => (sockets.tcp = 19), 1);
    expect(await timedWait(reads, state)).toEqual({ afterMs: FAST_READ_INTERVAL_MS, trigger: 'hint' });
  });
});
