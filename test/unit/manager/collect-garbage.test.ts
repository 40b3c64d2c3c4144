import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { type Collected, collectAfterCrowds } from '../../../src/manager/collect-garbage.js';

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

function setup(): { gc: ReturnType<typeof vi.fn>; collections: Collected[]; collector: ReturnType<typeof collectAfterCrowds> } {
  const gc = vi.fn();
  const collections: Collected[] = [];
  const collector = collectAfterCrowds((collected) => collections.push(collected), { gc, crowd: 100, settleMs: 1_000 });
  return { gc, collections, collector };
}

describe('collectAfterCrowds', () => {
  it('collects once, heap-shrinking, when a crowd of waiters has ended and none ended for the settle time; then holds no timer', () => {
    const { gc, collections, collector } = setup();
    for (let i = 0; i < 100; i += 1) collector.ended();
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(1_000);
    expect(gc).toHaveBeenCalledTimes(1);
    expect(gc).toHaveBeenCalledWith({ type: 'major', execution: 'sync', flavor: 'last-resort' });
    expect(collections).toMatchObject([{ waiters: 100 }]);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('waits while waiters keep ending, and counts them all', () => {
    const { gc, collections, collector } = setup();
    for (let i = 0; i < 100; i += 1) collector.ended();
    for (let second = 0; second < 5; second += 1) {
      vi.advanceTimersByTime(999);
      collector.ended();
      vi.advanceTimersByTime(1);
    }
    expect(gc).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1_000);
    expect(gc).toHaveBeenCalledTimes(1);
    expect(collections).toMatchObject([{ waiters: 105 }]);
  });

  it('leaves a few waiters to V8: no timer, no collection', () => {
    const { gc, collector } = setup();
    for (let i = 0; i < 99; i += 1) collector.ended();
    expect(vi.getTimerCount()).toBe(0);
    vi.advanceTimersByTime(60_000);
    expect(gc).not.toHaveBeenCalled();
  });

  it("fetches V8's own gc when none is given, and it collects", () => {
    const collections: Collected[] = [];
    const collector = collectAfterCrowds((collected) => collections.push(collected), { crowd: 1, settleMs: 10 });
    collector.ended();
    vi.advanceTimersByTime(10);
    expect(collections).toHaveLength(1);
    expect(collections[0]?.heapMiB).toBeGreaterThan(0);
  });
});
