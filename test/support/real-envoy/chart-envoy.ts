// Real Envoy as the chart runs it: the rendered bootstrap and Envoy's rendered command line
// (`--drain-strategy immediate --drain-time-s N`), with only the addresses changed so tests run
// side by side: listeners on ephemeral loopback ports, and the admin API on 127.0.0.1, on [::1] or
// on a Unix socket (the chart's admin cluster, which serves /stats/prometheus, follows it).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Address, Bootstrap } from '../chart/bootstrap.js';
import { type RenderOptions, renderChart } from '../chart/helm.js';
import { type RenderedPod, readPod } from '../chart/manifests.js';
import { type RealEnvoy, startRealEnvoy, withAdminAt } from './process.js';

export type AdminKind = 'ipv4' | 'ipv6' | 'unix';

export interface ChartEnvoyOptions {
  readonly admin?: AdminKind;
  /** Replaces the chart's `--drain-time-s` value. */
  readonly drainTimeS?: number;
  /** Chart values; the defaults render the chart's own bootstrap. */
  readonly render?: RenderOptions;
  /** The bootstrap's `stats_flush_interval` (the chart leaves Envoy's 5 s default), e.g. `2s`. */
  readonly statsFlushInterval?: string;
  /** Changes the rendered bootstrap before Envoy starts: routes `ingress` to an application, renames a stat prefix. */
  readonly edit?: (bootstrap: Bootstrap) => Bootstrap;
}

export interface ChartEnvoy extends RealEnvoy {
  readonly rendered: RenderedPod;
  /** Envoy's command line as started, after `--config-path`. */
  readonly args: readonly string[];
}

const renders = new Map<string, Promise<RenderedPod>>();

/** Renders once per set of values and test file: helm takes a few hundred milliseconds. */
export function renderedPod(render: RenderOptions = {}): Promise<RenderedPod> {
  const key = JSON.stringify(render);
  let pod = renders.get(key);
  if (pod === undefined) {
    pod = renderChart(render).then(readPod);
    renders.set(key, pod);
  }
  return pod;
}

/** Envoy's flags that take no value among those the chart renders. */
const SWITCHES = new Set(['--disable-hot-restart']);

/** Envoy's rendered arguments without `--config-path` and `--log-level`, which the starter sets. */
function chartEnvoyArgs(rendered: RenderedPod, drainTimeS?: number): string[] {
  const args = [...(rendered.envoy.args ?? [])];
  const out: string[] = [];
  let i = 0;
  while (i < args.length) {
    const flag = args[i] as string;
    if (SWITCHES.has(flag)) {
      out.push(flag);
      i += 1;
      continue;
    }
    const value = args[i + 1];
    if (value === undefined || !flag.startsWith('--')) throw new Error(`Envoy's rendered args are not flags with values: ${args.join(' ')}`);
    if (flag !== '--config-path' && flag !== '--log-level') out.push(flag, flag === '--drain-time-s' && drainTimeS !== undefined ? String(drainTimeS) : value);
    i += 2;
  }
  if (drainTimeS !== undefined && !out.includes('--drain-time-s')) throw new Error('the chart no longer passes --drain-time-s');
  return out;
}

export async function startChartEnvoy(options: ChartEnvoyOptions = {}): Promise<ChartEnvoy> {
  const rendered = await renderedPod(options.render);
  const admin = options.admin ?? 'ipv4';
  const dir = admin === 'unix' ? mkdtempSync(join(tmpdir(), 'envoy-admin-')) : undefined;
  const address: Address =
    dir !== undefined ? { pipe: { path: join(dir, 'admin.sock') } } : { socket_address: { address: admin === 'ipv6' ? '::1' : '127.0.0.1', port_value: 0 } };
  const args = chartEnvoyArgs(rendered, options.drainTimeS);
  try {
    const bootstrap = withAdminAt(options.edit?.(rendered.bootstrap) ?? rendered.bootstrap, address);
    const flush = options.statsFlushInterval === undefined ? {} : { stats_flush_interval: options.statsFlushInterval };
    const envoy = await startRealEnvoy({ bootstrap: { ...bootstrap, ...flush }, args });
    return {
      ...envoy,
      rendered,
      args,
      async stop(graceMs?: number) {
        await envoy.stop(graceMs);
        if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}
