import { afterEach, describe, expect, it, vi } from 'vitest';
import { BEFORE_SIGKILL_MS, finalScrapeDeadline, ScrapeLog, scrapersBehind } from '../../../src/manager/final-scrape.js';

describe('finalScrapeDeadline', () => {
  const stop = 100_000;

  it('is the timeout after the stop without a grace period', () => {
    expect(finalScrapeDeadline({ timeoutMs: 20_000, gracePeriodMs: undefined }, stop, undefined)).toBe(120_000);
  });
  it('ends before the SIGKILL the grace period brings, counted from the hook', () => {
    // Hook at 40 s, grace 90 s: SIGKILL at 130 s; the timeout alone would end at 150 s.
    expect(finalScrapeDeadline({ timeoutMs: 50_000, gracePeriodMs: 90_000 }, stop, 40_000)).toBe(130_000 - BEFORE_SIGKILL_MS);
    expect(finalScrapeDeadline({ timeoutMs: 20_000, gracePeriodMs: 90_000 }, stop, 40_000)).toBe(120_000);
  });
  it('gives no stay when the grace period is spent, or when its start is unknown', () => {
    expect(finalScrapeDeadline({ timeoutMs: 20_000, gracePeriodMs: 90_000 }, stop, 10_000)).toBeUndefined();
    expect(finalScrapeDeadline({ timeoutMs: 20_000, gracePeriodMs: 90_000 }, stop, undefined)).toBeUndefined();
  });
});

describe('scrapersBehind', () => {
  const scrapes = new Map([
    ['10.0.0.1', { atMs: 95_000, version: 3 }],
    ['10.0.0.2', { atMs: 99_000, version: 4 }],
    ['10.0.0.3', { atMs: 50_000, version: 1 }],
  ]);

  it('names the recent scrapers that read an older version', () => {
    expect(scrapersBehind(scrapes, 4, 80_000)).toEqual(['10.0.0.1']);
  });
  it('waits for none that stopped scraping before the window', () => {
    expect(scrapersBehind(scrapes, 5, 80_000)).toEqual(['10.0.0.1', '10.0.0.2']);
    expect(scrapersBehind(scrapes, 5, 40_000)).toEqual(['10.0.0.1', '10.0.0.2', '10.0.0.3']);
  });
});

describe('ScrapeLog.caughtUp', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('resolves true at once when nobody is behind', async () => {
    const log = new ScrapeLog();
    log.served('a', 2);
    await expect(log.caughtUp(2, 0, Date.now() + 60_000)).resolves.toBe(true);
  });

  it('resolves true when the last scraper behind reads the version, not before', async () => {
    vi.useFakeTimers();
    const log = new ScrapeLog();
    log.served('a', 1);
    log.served('b', 1);
    let read: boolean | undefined;
    void log.caughtUp(2, 0, Date.now() + 60_000).then((value) => (read = value));
    log.served('a', 2);
    await vi.advanceTimersByTimeAsync(10);
    expect(read).toBeUndefined();
    log.served('b', 2);
    await vi.advanceTimersByTimeAsync(0);
    expect(read).toBe(true);
  });

  it('resolves false at the deadline', async () => {
    vi.useFakeTimers();
    const log = new ScrapeLog();
    log.served('a', 1);
    let read: boolean | undefined;
    void log.caughtUp(2, 0, Date.now() + 15_000).then((value) => (read = value));
    await vi.advanceTimersByTimeAsync(14_999);
    expect(read).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    expect(read).toBe(false);
  });
});
