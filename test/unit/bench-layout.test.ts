// bench/ holds benchmarks of this tool: each file at its top is one scenario that bench/run.ts
// runs, and what they share sits in bench/support/. The tests' stand-ins, real Envoy, sandbox,
// fleet rig and podman pods are shared through test/support/ alone, so a test folder's own support
// code can change with its tests without breaking a benchmark.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const BENCH = resolve('bench');
const RUN = readFileSync(join(BENCH, 'run.ts'), 'utf8');

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    return entry.isDirectory() ? tsFiles(path) : entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** The scenario files bench/run.ts imports, each with the name it imports from it. */
function importedScenarios(run: string): Map<string, string> {
  return new Map([...run.matchAll(/^import \{ (\w+) \} from '\.\/([\w-]+)\.js';$/gm)].map((match) => [`${match[2]}.ts`, match[1] ?? '']));
}

/** The names listed in bench/run.ts's SCENARIOS array. */
function registered(run: string): string[] {
  const list = /const SCENARIOS[^=]*=\s*\[([^\]]*)\]/.exec(run)?.[1] ?? '';
  return list
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
}

/** Every relative import of `file` that leaves bench/ for test/, as the path under the repository. */
function testImports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*)'(\.{1,2}\/[^']+)'/g)]
    .map((match) => relative(process.cwd(), resolve(file, '..', match[1] ?? '')))
    .filter((path) => path.startsWith('test/'));
}

describe('bench/', () => {
  it('every file at the top of bench/ is a scenario that bench/run.ts runs', () => {
    const files = readdirSync(BENCH).filter((name) => name.endsWith('.ts') && name !== 'run.ts');
    const imported = importedScenarios(RUN);
    expect(files.length).toBeGreaterThan(10);
    expect([...imported.keys()].sort()).toEqual(files.sort());
    expect(registered(RUN).sort()).toEqual([...imported.values()].sort());
  });

  it('takes from test/ only what test/support/ shares', () => {
    const shared = (path: string): boolean => path.startsWith('test/support/');
    const reaching = tsFiles(BENCH).flatMap((file) =>
      testImports(file)
        .filter((path) => !shared(path))
        .map((path) => `${relative(process.cwd(), file)} imports ${path}`),
    );
    expect(reaching).toEqual([]);
  });

  it('reads both kinds of import', () => {
    expect(importedScenarios("import { a } from './a-b.js';\nimport { c } from './support/c.js';\n")).toEqual(new Map([['a-b.ts', 'a']]));
    expect(registered('const SCENARIOS: readonly Scenario[] = [a, b,\n c];')).toEqual(['a', 'b', 'c']);
  });
});
