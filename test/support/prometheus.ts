// Prometheus' own text-format parser (the official Python client, pinned by sha256 in a venv
// outside the repository, see test/setup/prometheus-parser.mjs) applied to an exposition: what a
// Prometheus server would make of it. A text it rejects fails the test with the parser's words.
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

interface ParsedSample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  /** NaN as the string 'NaN': JSON has no NaN. */
  readonly value: number | 'NaN';
}

export interface ParsedFamily {
  readonly name: string;
  readonly type: string;
  readonly documentation: string;
  readonly samples: readonly ParsedSample[];
}

const PARSE = `
import json, math, sys
from prometheus_client.parser import text_string_to_metric_families
families = []
for family in text_string_to_metric_families(sys.stdin.read()):
    samples = [{"name": s.name, "labels": s.labels, "value": "NaN" if math.isnan(s.value) else s.value} for s in family.samples]
    families.append({"name": family.name, "type": family.type, "documentation": family.documentation, "samples": samples})
print(json.dumps(families))
`;

let python: string | undefined;

/** The parser's python, its environment made on the first call of a machine (global setup makes it). */
export async function prometheusPython(): Promise<string> {
  if (python === undefined) {
    const script = (await import(pathToFileURL(resolve('test/setup/prometheus-parser.mjs')).href)) as { ensurePrometheusParser?: () => string };
    if (typeof script.ensurePrometheusParser !== 'function') throw new Error('test/setup/prometheus-parser.mjs no longer exports ensurePrometheusParser');
    python = script.ensurePrometheusParser();
  }
  return python;
}

export async function parsePrometheusText(text: string): Promise<ParsedFamily[]> {
  const run = spawnSync(await prometheusPython(), ['-c', PARSE], { input: text, encoding: 'utf8', timeout: 30_000 });
  if (run.status !== 0)
    throw new Error(`prometheus_client rejected the exposition: ${(run.stderr || run.error?.message || '').trim().split('\n').slice(-1)[0] ?? ''}`);
  return JSON.parse(run.stdout) as ParsedFamily[];
}

/** The value of the one sample named `name` with exactly `labels`; undefined when there is none. */
export function sampleValue(families: readonly ParsedFamily[], name: string, labels: Record<string, string> = {}): number | 'NaN' | undefined {
  for (const family of families) {
    for (const sample of family.samples) {
      if (sample.name === name && JSON.stringify(sample.labels) === JSON.stringify(labels)) return sample.value;
    }
  }
  return undefined;
}
