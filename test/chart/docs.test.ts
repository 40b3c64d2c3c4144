// The chart's documentation keeps up with its values: every value described in values.yaml, every
// described value listed in the chart README (and no row for a value that does not exist), the
// schema closed over the same keys, and NOTES.txt, as helm renders it in each mode, telling how to
// watch a drain and how to run one by hand.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CHART_DIR, renderNotes } from '../support/chart/helm.js';
import { valueKeys } from '../support/chart/values-docs.js';

const read = (file: string): string => readFileSync(join(CHART_DIR, file), 'utf8');
const keys = valueKeys(read('values.yaml'));

/** The first column of the README's values table: `key` or `key.*`. */
function readmeRows(): string[] {
  return [...read('README.md').matchAll(/^\| `([^`]+)` \|/gm)].map((match) => match[1] as string);
}

interface SchemaNode {
  readonly properties?: Record<string, SchemaNode>;
  readonly additionalProperties?: boolean | object;
}

describe('chart documentation', () => {
  it("describes every value in values.yaml with a `# --` comment (its own or a parent's)", () => {
    expect(keys.length).toBeGreaterThan(50);
    expect(keys.filter((key) => key.leaf && !key.covered).map((key) => key.path)).toEqual([]);
    expect(keys.find((key) => key.path === 'shutdown.drainTimeout')?.described).toBe(true);
  });

  it('lists every described value in the README table, and only values that exist', () => {
    const rows = readmeRows();
    const listed = (path: string): boolean => rows.includes(path) || rows.some((row) => row.endsWith('.*') && path.startsWith(row.slice(0, -1)));
    const topmostDescribed = keys.filter((key) => key.described && !keys.some((other) => other.described && key.path.startsWith(`${other.path}.`)));
    expect(topmostDescribed.map((key) => key.path).filter((path) => !listed(path))).toEqual([]);
    const paths = new Set(keys.map((key) => key.path));
    expect(rows.filter((row) => !paths.has(row.replace(/\.\*$/, '')))).toEqual([]);
  });

  it('closes the schema over exactly the keys of values.yaml', () => {
    const schema = JSON.parse(read('values.schema.json')) as SchemaNode;
    expect(schema.additionalProperties).toBe(false);
    const topLevel = keys.filter((key) => !key.path.includes('.')).map((key) => key.path);
    expect(
      Object.keys(schema.properties ?? {})
        .filter((key) => key !== 'global')
        .sort(),
    ).toEqual([...topLevel].sort());
    for (const section of ['shutdown', 'admin', 'shutdownManager', 'envoy', 'hookToken', 'sidecarless']) {
      const node = schema.properties?.[section];
      expect(node?.additionalProperties, section).toBe(false);
      const children = keys.filter((key) => key.path.startsWith(`${section}.`) && key.path.split('.').length === 2).map((key) => key.path.split('.')[1]);
      expect(Object.keys(node?.properties ?? {}).sort(), section).toEqual(children.sort());
    }
  });

  it.each([
    { mode: 'the classic sidecar', options: {}, logs: '-c shutdown-manager', drain: '-c shutdown-manager -- envoy-shutdown-manager shutdown' },
    {
      mode: 'the native sidecar',
      options: { set: ['nativeSidecar=true'], kubeVersion: '1.29.0' },
      logs: '-c shutdown-manager',
      drain: '-c shutdown-manager -- envoy-shutdown-manager shutdown',
    },
    {
      mode: 'sidecar-less mode',
      options: { set: ['mode=sidecarless'] },
      logs: '-c envoy',
      drain: '-c envoy -- /esm/current/lib/ld-linux-x86-64.so.2 --library-path /esm/current/lib /esm/current/envoy-shutdown-manager shutdown --no-ready-file',
    },
    {
      mode: 'sidecar-less mode from an image volume',
      options: { set: ['mode=sidecarless', 'sidecarless.source=imageVolume'], kubeVersion: '1.33.0' },
      logs: '-c envoy',
      drain:
        '-c envoy -- /esm/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2 --library-path /esm/lib/x86_64-linux-gnu:/esm/usr/lib/x86_64-linux-gnu /esm/usr/local/bin/envoy-shutdown-manager shutdown --no-ready-file',
    },
  ])('tells in NOTES.txt, in $mode, how to watch a drain and how to run one by hand, in a few lines', async ({ mode, options, logs, drain }) => {
    const notes = await renderNotes(options);
    expect(notes).toContain(`kubectl logs -n proxies -f <pod> ${logs}\n`);
    expect(notes).toContain(`kubectl exec -n proxies <pod> ${drain}`);
    expect(notes.includes('shutdown-manager sidecar') || notes.includes('shutdown-manager native sidecar')).toBe(!mode.startsWith('sidecar-less'));
    expect(notes.includes('WARNING: sidecarless.source imageVolume is untested')).toBe(mode.endsWith('image volume'));
    expect(notes.split('\n').length).toBeLessThan(20);
  });
});
