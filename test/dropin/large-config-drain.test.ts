// A large gateway drains early with idle pooled connections open: the peers' HTTPS listener grown
// to 1,000 TLS filter chains, or to 100 listeners, beside an HTTP listener holding an idle HTTP/1.1
// and an idle HTTP/2 connection, and the peer's stats listener with a scraper calling it
// throughout (../support/dropin/large-config-pod.ts). Real Envoy 1.40 runs in a sandbox on the
// peer's own ports and admin address; the drain is our `shutdown` command, or the single executable
// called as the peer's own hook (`envoy-gateway envoy shutdown`, `/bin/contour envoy shutdown`).
// Each ends by itself, not at a timeout, while the idle connections are still open, and every
// request the clients sent was answered.
import { describe, expect, it } from 'vitest';
import { drainLargePod, type Hook, IDLE_ONLY_MSG, logged } from '../support/dropin/large-config-pod.js';
import type { PodObservation } from '../support/dropin/pod.js';
import type { LargeConfigSize } from '../support/large-config/expand.js';

function check(seen: PodObservation, context: string): void {
  const stdout = seen.hook?.stdout ?? '';
  const why = `${context}\n${JSON.stringify({ hook: { ...seen.hook, stdout: seen.hook?.stdout.slice(-3_000) } }, null, 1)}`;
  // Ended by itself: drained, not the timeout (the drop-ins exit 0 on either, so the log says which).
  expect(seen.hook?.exitCode, why).toBe(0);
  const finished = logged(stdout, 'shutdown finished');
  expect(finished, why).toMatchObject({ result: 'drained', connections: 0 });
  expect(seen.readyFileExists, why).toBe(true);
  // The idle pool did not hold it: counted as idle once the quiet period passed, still open at the release.
  const idleOnly = logged(stdout, IDLE_ONLY_MSG);
  expect(idleOnly, why).toMatchObject({ inFlight: 0 });
  expect(idleOnly?.connections, why).toBeGreaterThanOrEqual(2);
  expect(seen.idlePoolOpenAtHookExit, why).toEqual([true, true]);
  // Nothing lost: every scrape sent while the hook ran was answered 200 (the idle pool's requests were, or the pod would not have started).
  expect(seen.scraped?.sent, why).toBeGreaterThan(0);
  expect(
    seen.scraped?.statuses.filter((status) => status !== 200),
    why,
  ).toEqual([]);
  // For the record, not asserted: how long each part took, and when the hook read Envoy's stats (ms after it started).
  const reads = seen.adminCalls.filter((call) => call.method === 'GET').map((call) => `${call.path}@${call.atMs}`);
  console.log(
    JSON.stringify({
      case: context,
      envoyStartMs: seen.envoyStartMs,
      hookMs: seen.hook?.atMs,
      elapsedMs: finished?.elapsedMs,
      idleOnlyAtMs: idleOnly?.elapsedMs,
      reads,
      scrapes: seen.scraped?.sent,
    }),
  );
}

const CASES: ReadonlyArray<readonly [Hook, string, LargeConfigSize]> = [
  ['ours', '1,000 filter chains', { listeners: 1, chainsPerListener: 1_000 }],
  ['envoy-gateway', '1,000 filter chains', { listeners: 1, chainsPerListener: 1_000 }],
  ['contour', '1,000 filter chains', { listeners: 1, chainsPerListener: 1_000 }],
  ['ours', '100 listeners', { listeners: 100, chainsPerListener: 3 }],
  ['envoy-gateway', '100 listeners', { listeners: 100, chainsPerListener: 3 }],
  ['contour', '100 listeners', { listeners: 100, chainsPerListener: 3 }],
];

describe('a large gateway drains early with idle pooled connections and a scraper, in real Envoy', () => {
  it.concurrent.each(CASES.map(([hook, label, size]) => [`${hook === 'ours' ? 'our shutdown' : `${hook}'s drop-in`}, ${label}`, hook, size] as const))(
    '%s',
    async (label, hook, size) => {
      check(await drainLargePod(hook, size), label);
    },
    90_000,
  );
});
