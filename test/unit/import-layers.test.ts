// The layers of src/, top to bottom; an import may only point down, to a lower layer or within its
// own folder. Type-only and dynamic imports count like any other.
//
//   main.ts         the entry point: signal capture, then the drop-in dispatch or the CLI
//   cli/  dropin/   command lines onto the domain: our own flags and variables (cli/), and the
//                   peers' command lines, Contour's and Envoy Gateway's (dropin/)
//   manager/        the sidecar: holds Envoy's preStop hook until the drain ended; its settings
//   drain/          the drain sequence, its pure policy, --dry-run; the drain's settings
//   status/ install/  the `status` report (the dry run shows it too); the self-contained copy
//   envoy/ handoff/ Envoy's admin API and stats; the files beside the ready file
//   shared/         errors, logger, parsers, durations, signals: no knowledge of any command
//
// Each setting's variable, default and parser lives with its domain (drain/drain-config.ts,
// manager/manager-settings.ts, status/status-config.ts); cli/ only adds flags and help to them.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = resolve('src');
/** Folder (or '.' for a file directly in src/) to layer: higher may import lower. */
const LAYERS: Readonly<Record<string, number>> = {
  '.': 6,
  cli: 5,
  dropin: 5,
  manager: 4,
  drain: 3,
  status: 2,
  install: 2,
  events: 2,
  envoy: 1,
  handoff: 1,
  shared: 0,
};

interface Import {
  readonly from: string;
  readonly to: string;
  readonly line: number;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    return entry.isDirectory() ? sourceFiles(path) : entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** Every relative import of a file: `import … from`, `export … from`, `import '…'` and `import('…')`, over line breaks. */
function relativeImports(file: string, text: string): Import[] {
  const pattern = /(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)'(\.{1,2}\/[^']+)'/gm;
  return [...text.matchAll(pattern)].map((match) => ({
    from: file,
    to: resolve(dirname(file), (match[1] ?? '').replace(/\.js$/, '.ts')),
    line: text.slice(0, match.index).split('\n').length,
  }));
}

function folderOf(file: string): string {
  const parts = relative(SRC, file).split('/');
  return parts.length === 1 ? '.' : (parts[0] ?? '.');
}

const IMPORTS = sourceFiles(SRC).flatMap((file) => relativeImports(file, readFileSync(file, 'utf8')));

/** The arrows of `imports` that do not point down, as readable lines. */
function upwardImports(imports: readonly Import[]): string[] {
  return imports.flatMap(({ from, to, line }) => {
    const [source, target] = [folderOf(from), folderOf(to)];
    if (source === target) return [];
    const [high, low] = [LAYERS[source], LAYERS[target]];
    if (high === undefined || low === undefined)
      return [`${relative(SRC, from)}:${line}: ${high === undefined ? source : target}/ is in no layer: add it to LAYERS`];
    return low < high ? [] : [`${relative(SRC, from)}:${line}: ${source}/ (layer ${high}) imports ${relative(SRC, to)} (${target}/, layer ${low})`];
  });
}

/** One cycle between folders, as the folders along it, or undefined. */
function folderCycle(imports: readonly Import[]): string[] | undefined {
  const edges = new Map<string, Set<string>>();
  for (const { from, to } of imports) {
    const [source, target] = [folderOf(from), folderOf(to)];
    if (source !== target) edges.set(source, (edges.get(source) ?? new Set()).add(target));
  }
  const done = new Set<string>();
  const visit = (folder: string, path: readonly string[]): string[] | undefined => {
    if (path.includes(folder)) return [...path.slice(path.indexOf(folder)), folder];
    if (done.has(folder)) return undefined;
    for (const next of edges.get(folder) ?? []) {
      const cycle = visit(next, [...path, folder]);
      if (cycle !== undefined) return cycle;
    }
    done.add(folder);
    return undefined;
  };
  for (const folder of edges.keys()) {
    const cycle = visit(folder, []);
    if (cycle !== undefined) return cycle;
  }
  return undefined;
}

describe('import layers of src/', () => {
  it('finds the imports, multi-line and dynamic ones included', () => {
    const found = relativeImports(
      '/x/src/cli/a.ts',
      "import {\n  b,\n} from '../drain/b.js';\nexport * from './c.js';\nconst d = await import('../envoy/d.js');\nimport './e.js';\n",
    );
    expect(found.map(({ to, line }) => [relative('/x/src', to), line])).toEqual([
      ['drain/b.ts', 3],
      ['cli/c.ts', 4],
      ['envoy/d.ts', 5],
      ['cli/e.ts', 6],
    ]);
    expect(IMPORTS.length).toBeGreaterThan(100);
  });

  it('every folder of src/ has a layer', () => {
    const folders = new Set(sourceFiles(SRC).map(folderOf));
    expect([...folders].filter((folder) => LAYERS[folder] === undefined)).toEqual([]);
  });

  it('no import points up or sideways', () => {
    expect(upwardImports(IMPORTS)).toEqual([]);
  });

  it('no cycle between folders', () => {
    expect(folderCycle(IMPORTS)).toBeUndefined();
    // The check itself: one arrow back up is a cycle.
    const back = { from: join(SRC, 'shared/x.ts'), to: join(SRC, 'cli/y.ts'), line: 1 };
    expect(folderCycle([...IMPORTS, back])).toBeDefined();
  });
});
