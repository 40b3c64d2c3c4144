// Bundles the CLI into one CommonJS file: the form Node's single-executable support loads,
// and the one file bin/envoy-shutdown-manager requires.

import { readFile } from 'node:fs/promises';
import { build } from 'esbuild';

const pkg = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8'));

await build({
  entryPoints: ['src/main.ts'],
  outfile: 'dist/envoy-shutdown-manager.cjs',
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  minifySyntax: true,
  // Less source for V8 to hold and read at every start; identifiers are kept for readable errors.
  minifyWhitespace: true,
  legalComments: 'linked',
  define: { __VERSION__: JSON.stringify(pkg.version) },
  logLevel: 'warning',
});
