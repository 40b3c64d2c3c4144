// V8's own garbage collection, on demand: for the rare moments a process knows it just dropped
// a lot (a crowd of waiters gone, a stats answer over its bound), where V8 left to itself would
// keep growing the heap (the executable runs without its memory reducer).

/** V8's `gc`, as `--expose-gc` exposes it. */
export type GarbageCollector = (options: { type: 'major'; execution: 'sync'; flavor: 'last-resort' }) => void;

let collector: GarbageCollector | undefined;

/** A full collection that also shrinks the heap and compacts, which a plain gc() does not. */
export function collectGarbage(gc: GarbageCollector = v8Collector()): void {
  gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
}

/** V8's gc, fetched once and kept. */
function v8Collector(): GarbageCollector {
  collector ??= v8Gc();
  return collector;
}

/**
 * V8's gc without `--expose-gc` on the command line, which costs every idle process about
 * 0.4 MiB: the flag set at run time exposes `gc` in contexts made afterwards. Fetched at the first
 * collection (the one context it lives in then stays, about as much).
 */
function v8Gc(): GarbageCollector {
  process.getBuiltinModule('node:v8').setFlagsFromString('--expose-gc');
  return process.getBuiltinModule('node:vm').runInNewContext('gc') as GarbageCollector;
}
