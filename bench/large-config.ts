// Large configurations (draft): what each admin read costs Envoy as the configuration grows, from
// 10 to 20,000 TLS filter chains on Envoy Gateway's HTTPS listener and 1 to 1,000 listeners of a
// few chains each (bench/support/large-config.ts), each as a ratio to the smallest size.
import { ENDPOINTS, measureSize, type SizeCost } from './support/large-config.js';
import { type Scenario, formatMs, progress, ratio, table } from './support/harness.js';
import type { LargeConfigSize } from '../test/support/large-config/expand.js';

export const SIZES: readonly LargeConfigSize[] = [
  { listeners: 1, chainsPerListener: 10 },
  { listeners: 1, chainsPerListener: 1_000 },
  { listeners: 1, chainsPerListener: 5_000 },
  { listeners: 1, chainsPerListener: 20_000 },
  { listeners: 100, chainsPerListener: 3 },
  { listeners: 1_000, chainsPerListener: 3 },
];

function label(cost: SizeCost): string {
  return `${cost.size.listeners} × ${cost.size.chainsPerListener}`;
}

function render(costs: readonly SizeCost[]): string {
  const base = costs[0];
  if (base === undefined) return 'no sizes measured';
  const sizes = table(
    ['listeners × chains', 'Envoy ready after', 'Envoy RSS'],
    costs.map((cost) => [label(cost), formatMs(cost.readyMs), `${cost.rssMiB.toFixed(0)} MiB`]),
  );
  const perEndpoint = table(
    ['admin call', ...costs.map(label)],
    ENDPOINTS.map(([name], i) => [
      name,
      ...costs.map((cost) => {
        const e = cost.endpoints[i];
        const b = base.endpoints[i];
        return e === undefined || b === undefined ? '–' : `${formatMs(e.medianMs)} (${ratio(e.medianMs, b.medianMs)}), CPU ${formatMs(e.cpuMsPerCall)}, ${e.bytes} B`;
      }),
    ]),
  );
  return `${sizes}\n\n${perEndpoint}`;
}

export const largeConfig: Scenario = {
  name: 'large-config',
  title: 'Large configurations: Envoy’s cost per admin read',
  async run() {
    const costs: SizeCost[] = [];
    for (const size of SIZES) {
      progress('large-config', `${size.listeners} listeners × ${size.chainsPerListener} chains`);
      costs.push(await measureSize('envoy-gateway', size));
    }
    return render(costs);
  },
};
