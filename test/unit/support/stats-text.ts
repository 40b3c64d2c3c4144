// Envoy's plain /stats answer for a list of stats, for fake admin APIs: `name: value` lines sorted by
// name, as real Envoy 1.40 writes its counters and gauges.
import { answered, type FakeStat } from './prometheus-text.js';

export function statsText(stats: readonly FakeStat[], usedOnly = false, filter?: RegExp): string {
  return answered(stats, usedOnly, filter)
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .map((stat) => `${stat.name}: ${stat.value}\n`)
    .join('');
}
