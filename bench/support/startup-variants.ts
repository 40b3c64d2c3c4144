// Single executables built the way `npm run package` builds ours (scripts/package.mjs: stripped
// Node 24, the same baked flags), from probe scripts and from our bundle with other SEA options:
// what the start-up bench compares ours with, to show where its start-up goes.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { BUNDLE } from './processes.js';

interface BuildOptions {
  readonly main: string;
  readonly output: string;
  readonly work: string;
  readonly codeCache?: boolean;
  readonly snapshot?: boolean;
}

/** Probe programs, as one CommonJS file each. */
const PROBES = {
  /** Nothing at all: what a single executable costs before any code of ours runs. */
  empty: '',
  /** The same with a user startup snapshot (of nothing): a snapshot's fixed cost. */
  emptySnapshot: "require('node:v8').startupSnapshot.setDeserializeMainFunction(() => {});",
  /** The least any Node program does to reach Envoy: load node:http, send POST /healthcheck/fail to argv's host:port. */
  httpRequest: `const [host, port] = process.argv[process.argv.length - 1].split(':');
require('node:http').request({ host, port, method: 'POST', path: '/healthcheck/fail' }, (res) => { res.resume(); res.on('end', () => process.exit(0)); }).end();`,
  /** A bare node:http server on argv's port, all interfaces (as the manager listens by default). */
  httpListen: "require('node:http').createServer((req, res) => res.end()).listen(Number(process.argv[process.argv.length - 1]));",
} as const;

type Variant = keyof typeof PROBES | 'noCodeCache' | 'snapshot';

export interface Variants {
  readonly paths: Readonly<Record<Variant, string>>;
  remove(): void;
}

export async function buildVariants(): Promise<Variants> {
  const script = (await import(pathToFileURL(resolve('scripts/package.mjs')).href)) as { buildSingleExecutable(options: BuildOptions): void };
  const dir = mkdtempSync(join(tmpdir(), 'bench-startup-variants-'));
  const make = (name: Variant, main: string, options: Partial<BuildOptions> = {}): string => {
    const output = join(dir, name);
    script.buildSingleExecutable({ main, output, work: join(dir, `work-${name}`), ...options });
    rmSync(join(dir, `work-${name}`), { recursive: true, force: true });
    return output;
  };
  try {
    const probe = (name: keyof typeof PROBES, options: Partial<BuildOptions> = {}): string => {
      const main = join(dir, `${name}.cjs`);
      writeFileSync(main, `${PROBES[name]}\n`);
      return make(name, main, options);
    };
    const snapshotMain = join(dir, 'snapshot-main.cjs');
    await build({
      entryPoints: ['bench/support/snapshot-main.ts'],
      outfile: snapshotMain,
      bundle: true,
      platform: 'node',
      format: 'cjs',
      target: 'node20',
      minifySyntax: true,
      minifyWhitespace: true,
      define: { __VERSION__: '"bench"' },
      logLevel: 'warning',
    });
    const paths: Record<Variant, string> = {
      empty: probe('empty'),
      emptySnapshot: probe('emptySnapshot', { snapshot: true, codeCache: false }),
      httpRequest: probe('httpRequest'),
      httpListen: probe('httpListen'),
      noCodeCache: make('noCodeCache', BUNDLE, { codeCache: false }),
      // V8 takes no code cache together with a snapshot: the snapshot holds what ran while it was made.
      snapshot: make('snapshot', snapshotMain, { snapshot: true, codeCache: false }),
    };
    return { paths, remove: () => rmSync(dir, { recursive: true, force: true }) };
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}
