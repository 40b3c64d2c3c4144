// Lays out the runtime image's whole root filesystem in a directory, from files this project makes:
// the single executable in /usr/local/bin, its dynamic loader and exactly the libraries it links
// (as `envoy-shutdown-manager install` finds and copies them), links naming it `envoy-gateway` and
// `/bin/contour` for the pods those projects generate, the loader again at the path the
// executable names (PT_INTERP), a passwd and group with the nonroot user 65532, an empty /tmp that
// any user may write (mode 1777, like a distroless base) and nothing else: no shell, no package
// manager. The Debian packages those libraries come from are recorded the way distroless images
// record theirs (/var/lib/dpkg/status.d: each package's control fields, and the md5sums of the files
// the image holds from it; /etc/os-release: the Debian release they belong to), so an SBOM
// generator or scanner sees them with their versions and knows whose security updates apply. Both image builds copy this directory into a FROM scratch stage: `npm run image` here,
// and the Dockerfile's build stage, so what users build is what the tests run. The same for the
// arm64 executable: its loader and libraries are where an arm64 Debian keeps them, found and copied
// by its own `install`, run under emulation with Debian's arm64 packages (scripts/emulation.mjs).
//
//   node scripts/image-rootfs.mjs [executable] [directory]    # defaults: dist/envoy-shutdown-manager dist/image/rootfs
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  closeSync,
  copyFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const ROOTFS = 'dist/image/rootfs';
export const IMAGE_EXECUTABLE = '/usr/local/bin/envoy-shutdown-manager';
/**
 * The other names the executable answers to (it dispatches on the name it is called by): Envoy
 * Gateway's pods run `envoy-gateway` from PATH, Contour's exec `/bin/contour`.
 */
export const PEER_LINKS = { '/usr/local/bin/envoy-gateway': 'envoy-shutdown-manager', '/bin/contour': '../usr/local/bin/envoy-shutdown-manager' };
/** The image's only unprivileged user, as in distroless `:nonroot`. */
export const NONROOT = 65532;
/** Where Debian keeps each architecture's libraries, by ELF machine (e_machine). */
const LIB_DIRS = new Map([
  [62, '/lib/x86_64-linux-gnu'],
  [183, '/lib/aarch64-linux-gnu'],
]);
const EM_AARCH64 = 183;
/** Debian's name for each architecture, by ELF machine. */
const DEBIAN_ARCHES = new Map([
  [62, 'amd64'],
  [183, 'arm64'],
]);
/** The Debian packages the loader and libraries come from: Node links nothing else. */
export const RUNTIME_PACKAGES = ['libc6', 'libgcc-s1', 'libstdc++6'];
/** Where the image records them, as distroless images do. */
export const DPKG_STATUS_DIR = 'var/lib/dpkg/status.d';

const PASSWD =
  'root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n';
const GROUP = 'root:x:0:\nnobody:x:65534:\nnonroot:x:65532:\n';

export class RootfsError extends Error {}

/**
 * Writes a root filesystem into `into` (emptied first) that runs each `binaries` entry from its
 * `to` path. `libraries` are the real files (soname → path) the loader needs; `interpreter` is the
 * loader's path as the binaries name it. Shared by the manager's image and the tests' Envoy image.
 */
export function layoutRootfs(into, { binaries, libraries, loader, interpreter, machine = 62 }) {
  const LIB_DIR = LIB_DIRS.get(machine);
  if (LIB_DIR === undefined) throw new RootfsError(`no library directory for ELF machine ${machine}`);
  rmSync(into, { recursive: true, force: true });
  const at = (path) => join(into, path);
  for (const dir of ['etc', 'home/nonroot', 'usr/local/bin', LIB_DIR.slice(1), dirname(interpreter).slice(1)]) mkdirSync(at(dir), { recursive: true });
  for (const { from, to } of binaries) copy(from, at(to), 0o755);
  copy(loader.path, at(join(LIB_DIR, loader.name)), 0o755);
  for (const [soname, path] of libraries) copy(path, at(join(LIB_DIR, soname)), 0o644);
  // The kernel starts the loader by the path written in the executable; Debian links it the same way.
  if (interpreter !== join(LIB_DIR, loader.name)) symlinkSync(relative(dirname(interpreter), join(LIB_DIR, loader.name)), at(interpreter));
  writeFileSync(at('etc/passwd'), PASSWD, { mode: 0o644 });
  writeFileSync(at('etc/group'), GROUP, { mode: 0o644 });
  mkdirSync(at('tmp'));
  // Sticky and world-writable, as on any Linux: where the root filesystem is writable, every user may use it.
  chmodSync(at('tmp'), 0o1777);
  for (const dir of ['.', 'etc', 'home', 'home/nonroot', 'usr', 'usr/local', 'usr/local/bin', 'lib', LIB_DIR.slice(1)]) chmodSync(at(dir), 0o755);
}

/**
 * The manager's loader and libraries, exactly as `install` lays them out for a sidecar-less hook.
 * `wrap` turns the install command into the one to run (the arm64 one: under emulation).
 */
function installedRuntime(executable, wrap = (command) => command) {
  const work = mkdtempSync(join(tmpdir(), 'esm-rootfs-'));
  try {
    const [command, ...args] = wrap([executable, 'install', work]);
    const result = spawnSync(command, args, { env: {}, encoding: 'utf8', timeout: 300_000 });
    if (result.status !== 0) throw new RootfsError(`${executable} install failed (exit ${result.status ?? result.signal}): ${result.stdout}${result.stderr}`);
    const lib = join(work, 'current', 'lib');
    const loaderName = readdirSync(lib).find((name) => name.startsWith('ld-'));
    if (loaderName === undefined) throw new RootfsError(`install laid out no loader in ${lib}`);
    const libraries = new Map(
      readdirSync(lib)
        .filter((name) => name !== loaderName)
        .map((name) => [name, join(lib, name)]),
    );
    return { loader: { name: loaderName, path: join(lib, loaderName) }, libraries, cleanup: () => rmSync(work, { recursive: true, force: true }) };
  } catch (error) {
    rmSync(work, { recursive: true, force: true });
    throw error;
  }
}

/** The ELF machine (e_machine) of a 64-bit little-endian ELF file: 62 x86-64, 183 arm64. */
export function elfMachine(path) {
  const fd = openSync(path, 'r');
  try {
    const header = Buffer.alloc(20);
    readSync(fd, header, 0, 20, 0);
    if (header.readUInt32BE(0) !== 0x7f454c46 || header[4] !== 2) throw new RootfsError(`${path} is not a 64-bit ELF file`);
    return header.readUInt16LE(18);
  } finally {
    closeSync(fd);
  }
}

/** The ELF program interpreter (PT_INTERP) an executable names, e.g. /lib64/ld-linux-x86-64.so.2. */
export function elfInterpreter(path) {
  const fd = openSync(path, 'r');
  try {
    const read = (offset, length) => {
      const buffer = Buffer.alloc(length);
      readSync(fd, buffer, 0, length, offset);
      return buffer;
    };
    const header = read(0, 64);
    if (header.readUInt32BE(0) !== 0x7f454c46 || header[4] !== 2) throw new RootfsError(`${path} is not a 64-bit ELF file`);
    const phoff = Number(header.readBigUInt64LE(0x20));
    const phentsize = header.readUInt16LE(0x36);
    for (let index = 0; index < header.readUInt16LE(0x38); index += 1) {
      const entry = read(phoff + index * phentsize, phentsize);
      if (entry.readUInt32LE(0) !== 3) continue; // PT_INTERP
      const text = read(Number(entry.readBigUInt64LE(8)), Number(entry.readBigUInt64LE(32))).toString('latin1');
      return text.replace(/\0.*$/s, '');
    }
    throw new RootfsError(`${path} names no program interpreter: it is not dynamically linked`);
  } finally {
    closeSync(fd);
  }
}

/**
 * Records, in `into`'s DPKG_STATUS_DIR, the Debian package each file in `libDir` comes from: the
 * package's control fields (from the dpkg database of the system `root` that installed or unpacked
 * it) and an md5sums with only the files the image holds, at their paths in the image; and that
 * system's Debian release in /etc/os-release. A file whose content is no file of RUNTIME_PACKAGES
 * fails the layout: the record would be wrong.
 */
export function recordDebianPackages(into, libDir, { root, arch }) {
  const admindir = join(root, 'var/lib/dpkg');
  const packages = RUNTIME_PACKAGES.map((name) => {
    const query = spawnSync('dpkg-query', [`--admindir=${admindir}`, '--status', `${name}:${arch}`], { encoding: 'utf8' });
    const md5sums = join(admindir, 'info', `${name}:${arch}.md5sums`);
    if (query.error !== undefined || query.status !== 0 || !existsSync(md5sums)) {
      throw new RootfsError(
        `dpkg in ${admindir} does not know ${name}:${arch} (${query.error?.message ?? query.stderr.trim()}): the image's libraries must come from Debian's packages`,
      );
    }
    const sums = new Set(
      readFileSync(md5sums, 'utf8')
        .split('\n')
        .map((line) => line.split(' ')[0]),
    );
    // The package's own fields: its state and conffiles on the machine that laid the image out are not the image's.
    const control = query.stdout
      .replace(/^Status: .*\n/m, '')
      .replace(/^Conffiles:\n(?: .*\n)*/m, '')
      .trimEnd();
    return { name, control, sums, files: [] };
  });
  for (const name of readdirSync(join(into, libDir)).sort()) {
    const path = join(libDir, name);
    if (!lstatSync(join(into, path)).isFile()) continue;
    const md5 = createHash('md5')
      .update(readFileSync(join(into, path)))
      .digest('hex');
    const owner = packages.find((pkg) => pkg.sums.has(md5));
    if (owner === undefined)
      throw new RootfsError(`/${path} is no file of ${RUNTIME_PACKAGES.map((name) => `${name}:${arch}`).join(', ')} as dpkg in ${admindir} records them`);
    owner.files.push(`${md5}  ${path}\n`);
  }
  const dir = join(into, DPKG_STATUS_DIR);
  mkdirSync(dir, { recursive: true });
  for (const { name, control, files } of packages.filter((pkg) => pkg.files.length > 0)) {
    writeFileSync(join(dir, name), `${control}\n`, { mode: 0o644 });
    writeFileSync(join(dir, `${name}.md5sums`), files.join(''), { mode: 0o644 });
  }
  for (const sub of ['var', 'var/lib', 'var/lib/dpkg', DPKG_STATUS_DIR]) chmodSync(join(into, sub), 0o755);
  writeFileSync(join(into, 'etc/os-release'), osRelease(readFileSync(join(root, 'etc/os-release'), 'utf8')), { mode: 0o644 });
}

/** The release's identity from a Debian os-release, named for what this image is: no Debian system, Debian's libraries. */
export function osRelease(debian) {
  const field = (name) => new RegExp(`^${name}=(.*)$`, 'm').exec(debian)?.[1];
  if (field('ID') !== 'debian' || field('VERSION_ID') === undefined)
    throw new RootfsError(`the libraries' system is no Debian release: its os-release says ID=${field('ID')}, VERSION_ID=${field('VERSION_ID')}`);
  const pretty = (field('PRETTY_NAME') ?? '').replace(/^"|"$/g, '');
  const keep = ['NAME', 'ID', 'VERSION_ID', 'VERSION', 'VERSION_CODENAME']
    .filter((name) => field(name) !== undefined)
    .map((name) => `${name}=${field(name)}\n`);
  return `PRETTY_NAME="envoy-shutdown-manager (libraries from ${pretty})"\n${keep.join('')}`;
}

/**
 * The manager image's root filesystem from the packaged executable (x86-64, or arm64: then its
 * `install` runs under emulation, in the namespace `emulate` wraps a command into). `system` is
 * the root whose dpkg database knows the libraries' packages: this machine's for x86-64, the arm64
 * sysroot for arm64.
 */
export function managerRootfs(executable, into, { emulate, system = '/' } = {}) {
  const machine = elfMachine(executable);
  if (machine === EM_AARCH64 && emulate === undefined)
    throw new RootfsError(`${executable} is an arm64 executable: its install must run under emulation (scripts/image.mjs passes one)`);
  const runtime = installedRuntime(executable, machine === EM_AARCH64 ? emulate : undefined);
  try {
    layoutRootfs(into, {
      binaries: [{ from: executable, to: IMAGE_EXECUTABLE }],
      libraries: runtime.libraries,
      loader: runtime.loader,
      interpreter: elfInterpreter(executable),
      machine,
    });
    mkdirSync(join(into, 'bin'), { mode: 0o755 });
    for (const [link, target] of Object.entries(PEER_LINKS)) symlinkSync(target, join(into, link));
    recordDebianPackages(into, LIB_DIRS.get(machine).slice(1), { root: system, arch: DEBIAN_ARCHES.get(machine) });
  } finally {
    runtime.cleanup();
  }
}

function copy(from, to, mode) {
  copyFileSync(from, to);
  chmodSync(to, mode);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
  const [executable = join(root, 'dist/envoy-shutdown-manager'), into = join(root, ROOTFS)] = process.argv.slice(2);
  try {
    managerRootfs(executable, into);
    console.log(`${into}: root filesystem for ${IMAGE_EXECUTABLE}`);
  } catch (error) {
    if (!(error instanceof RootfsError)) throw error;
    console.error(`image-rootfs: ${error.message}`);
    process.exit(1);
  }
}
