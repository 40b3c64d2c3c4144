// The executable runs without V8's memory reducer (it re-arms a timer for as long as an idle
// process lives), and that reducer is what would hand the memory of a crowd of departed waiters
// back to the system. So once a crowd has come and gone and things are quiet again, the manager
// asks V8 once for a full collection that also shrinks the heap. Nothing runs while idle. (The
// executable also optimizes on the main thread, --no-concurrent-recompilation: freed compiler
// memory then lands in the main thread's malloc arena, reused, not in compiler threads' arenas
// that keep it.)
import { collectGarbage, type GarbageCollector } from '../shared/gc.js';

/** Waiters that ended since the last collection before one is worth it (a few MiB of garbage). */
const CROWD = 100;
/** How long no waiter may end before the crowd counts as gone. */
const SETTLE_MS = 1_000;

/** What a collection left, for its log line. */
export interface Collected {
  /** Waiters that ended since the last collection. */
  readonly waiters: number;
  /** V8's heap (committed), and memory outside it that V8 knows of, in MiB. */
  readonly heapMiB: number;
  readonly externalMiB: number;
}

export interface CrowdCollector {
  /** A waiter ended (answered or gone). */
  ended(): void;
}

export interface CollectOptions {
  /** Default: V8's own, fetched at the first collection. */
  readonly gc?: GarbageCollector;
  readonly crowd?: number;
  readonly settleMs?: number;
}

export function collectAfterCrowds(onCollected: (collected: Collected) => void, options: CollectOptions = {}): CrowdCollector {
  const { crowd = CROWD, settleMs = SETTLE_MS } = options;
  const { gc } = options;
  let ended = 0;
  let endedSinceArmed = false;
  let timer: NodeJS.Timeout | undefined;
  const settle = (): void => {
    timer = undefined;
    if (endedSinceArmed) {
      arm(); // still going: wait for quiet
      return;
    }
    const waiters = ended;
    ended = 0;
    collectGarbage(gc);
    const { heapTotal, external } = process.memoryUsage();
    onCollected({ waiters, heapMiB: toMiB(heapTotal), externalMiB: toMiB(external) });
  };
  const arm = (): void => {
    endedSinceArmed = false;
    timer = setTimeout(settle, settleMs);
    timer.unref();
  };
  return {
    ended: () => {
      ended += 1;
      endedSinceArmed = true;
      if (timer === undefined && ended >= crowd) arm();
    },
  };
}

const toMiB = (bytes: number): number => Math.round(bytes / 104_857.6) / 10;
