// The chart's templates spell our variables by hand (Helm cannot import them): each must be one the
// commands read, so a renamed or mistyped variable fails here instead of being silently ignored;
// and every drain setting must reach the drain in each mode, or be left out on purpose, so a new
// flag the chart forgets fails here too.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ENV } from '../../src/cli/config.js';
import { DRAIN_SETTINGS } from '../../src/drain/drain-config.js';
import type { OptionSpec } from '../../src/shared/option-spec.js';
import { type RenderOptions, renderChart } from '../support/chart/helm.js';
import { readPod, readSidecarlessPod } from '../support/chart/manifests.js';

const TEMPLATES = 'charts/envoy-shutdown-manager/templates';

function variablesIn(dir: string): Map<string, string> {
  const found = new Map<string, string>();
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) for (const [name, file] of variablesIn(path)) found.set(name, file);
    else for (const [name] of readFileSync(path, 'utf8').matchAll(/ENVOY_SHUTDOWN_[A-Z0-9_]+/g)) found.set(name, path);
  }
  return found;
}

describe("the chart's environment variables", () => {
  const known = new Set<string>(Object.values(ENV));
  const used = variablesIn(TEMPLATES);

  it('names some', () => {
    expect(used.size).toBeGreaterThan(10);
  });

  it.each([...used])('%s (in %s) is read by a command', (name) => {
    expect(known.has(name)).toBe(true);
  });
});

type DrainSetting = keyof typeof DRAIN_SETTINGS;

/** Where the drain runs in each mode: the environment it reads, and its command line (none when the manager runs it). */
interface DrainPlace {
  readonly env: Readonly<Record<string, string>>;
  readonly command: readonly string[];
}

const MODES: ReadonlyArray<{
  readonly mode: string;
  readonly render: RenderOptions;
  readonly place: (objects: Awaited<ReturnType<typeof renderChart>>) => DrainPlace;
  /** The settings the chart leaves out on purpose in this mode, and why. */
  readonly notSet: Partial<Record<DrainSetting, string>>;
}> = [
  {
    mode: 'classic sidecar',
    render: {},
    place: (objects) => {
      const pod = readPod(objects);
      return { env: pod.sidecarEnv, command: pod.sidecar.lifecycle?.preStop?.exec?.command ?? [] };
    },
    notSet: { noReadyFile: "the sidecar's drain writes the ready file that Envoy's hook waits for" },
  },
  {
    mode: 'native sidecar',
    render: { set: ['nativeSidecar=true'], kubeVersion: '1.29.0' },
    place: (objects) => ({ env: readPod(objects).sidecarEnv, command: [] }),
    notSet: {
      noReadyFile: 'the manager runs the drain and releases Envoy on its end: the ready file records it',
      requireEnvoyPrestop: "the drain starts only when Envoy's own hook calls /shutdown/drain: the pod is terminating",
      envoyPrestopWait: "nothing to wait for: Envoy's hook is what started the drain",
    },
  },
  {
    mode: 'sidecar-less',
    render: { set: ['mode=sidecarless'] },
    place: (objects) => {
      const pod = readSidecarlessPod(objects);
      return { env: pod.envoyEnv, command: pod.hookCommand };
    },
    notSet: {
      readyFile: "no ready file (--no-ready-file): Envoy's SIGTERM follows its own hook's return",
      requireEnvoyPrestop: "the hook is Envoy's own: the pod is terminating",
      envoyPrestopWait: "nothing to wait for: the hook is Envoy's own",
    },
  },
];

const SETTINGS: ReadonlyArray<readonly [DrainSetting, OptionSpec]> = Object.entries(DRAIN_SETTINGS) as Array<[DrainSetting, OptionSpec]>;

describe.each(MODES)('every drain setting, $mode', ({ render, place, notSet }) => {
  let drain: DrainPlace;
  beforeAll(async () => {
    drain = place(await renderChart(render));
  });

  it.each(SETTINGS)('%s reaches the drain, or is left out for a stated reason', (name, spec) => {
    const flag = spec.flags.split(' ')[0] ?? spec.flags;
    const reaches = (spec.env !== undefined && spec.env in drain.env) || drain.command.includes(flag);
    expect({ name, reaches, why: notSet[name] }).toEqual({ name, reaches: notSet[name] === undefined, why: notSet[name] });
  });
});
