// Waiting on what gives no event of its own (Envoy's admin API, a container's state, a port that
// starts accepting, a file another process writes): poll it until it holds, bounded by a deadline
// whose error names what never happened. A slow machine makes a wait longer, never wrong.
import { setTimeout as sleep } from 'node:timers/promises';

export interface PollOptions {
  /** Give up after this long (default 15 s). */
  readonly timeoutMs?: number;
  /** Pause between looks (default 20 ms). */
  readonly everyMs?: number;
  /** What the last look saw, for the error at the deadline. */
  readonly lastSeen?: () => string | undefined;
}

/**
 * Polls `probe` until it returns something other than undefined, and returns that. A probe that
 * throws ends the wait with its error: a probe that expects passing failures catches them itself.
 */
export async function pollFor<T>(what: string, probe: () => T | undefined | Promise<T | undefined>, options: PollOptions = {}): Promise<T> {
  const { timeoutMs = 15_000, everyMs = 20, lastSeen } = options;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) {
      const seen = lastSeen?.();
      throw new Error(`${what}: not within ${timeoutMs} ms${seen === undefined ? '' : ` (${seen})`}`);
    }
    await sleep(everyMs);
  }
}

/** Polls `condition` until it holds. */
export async function pollUntil(what: string, condition: () => boolean | Promise<boolean>, options: PollOptions = {}): Promise<void> {
  await pollFor(what, async () => ((await condition()) ? true : undefined), options);
}

/** True when `promise` settled within `ms` (measured on Date.now(), which a timer may beat by 1 ms; kubelet's waits never end early). */
export async function within(promise: Promise<unknown>, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  const stop = new AbortController();
  const settled = promise.then(
    () => true,
    () => true,
  );
  const timedOut = (async () => {
    try {
      while (Date.now() < deadline) await sleep(deadline - Date.now(), undefined, { signal: stop.signal });
    } catch {
      return true; // the promise won
    }
    return false;
  })();
  const result = await Promise.race([settled, timedOut]);
  stop.abort();
  return result;
}

/** `promise`, or an error naming `what` once `boundMs` have passed. */
export async function bounded<T>(promise: Promise<T>, what: string, boundMs: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not within ${boundMs} ms`)), boundMs);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
