// Installs the Debian packages the build, the image and the release need when their commands are
// missing: strip and aarch64-linux-gnu-strip (the single executables), podman with runc (the
// image), qemu-aarch64-static (the arm64 executable's smoke test and the arm64 image's `install`,
// under emulation); and lays out the arm64 libraries the arm64 executable runs with (a sysroot from
// Debian's own arm64 packages, pinned by version, cached outside the repository). Elsewhere, or
// without root, it says exactly what to install instead of trying. The test run's own packages
// (and these) come from test/setup/debian.mjs, which builds on this one.
//
//   node scripts/debian.mjs        # installs what is missing, prints nothing when all is there
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * Each command the build needs and the package that brings it. runc is named: podman accepts crun
 * or runc, and apt would pick crun, which fails on these machines' hybrid cgroups. podman's
 * recommends come along (buildah builds the images, catatonit the pod's infra image).
 */
export const BUILD_PACKAGES = [
  { command: 'strip', pkg: 'binutils' },
  // The host's strip reads x86 ELF only; this one strips the arm64 executable's Node.
  { command: 'aarch64-linux-gnu-strip', pkg: 'binutils-aarch64-linux-gnu' },
  { command: 'podman', pkg: 'podman' },
  { command: 'runc', pkg: 'runc' },
  // Without its recommends (systemd | binfmt-support): it is registered only in a namespace of our own.
  { command: 'qemu-aarch64-static', pkg: 'qemu-user-static', recommends: false },
];

/**
 * The arm64 executable's runtime libraries, from Debian 12's arm64 packages at exactly these
 * versions (apt checks them against Debian's signed index). The same versions as the amd64 ones
 * the x86-64 image carries; a Debian point release that drops them makes the download fail, naming
 * the version to bump here.
 */
export const ARM64_PACKAGES = { libc6: '2.36-9+deb12u14', 'libgcc-s1': '12.2.0-14+deb12u1', 'libstdc++6': '12.2.0-14+deb12u1' };
/** Where the unpacked arm64 packages live: outside the repository, one directory per set of versions. */
export const SYSROOT_CACHE = process.env.ESM_SYSROOT_CACHE ?? '/var/cache/esm-arm64-sysroot';
/**
 * dpkg's record of the unpacked packages inside each sysroot (a status file and each package's
 * md5sums, as dpkg keeps them for installed packages) and the os-release of the Debian release apt
 * took them from: the image records the packages its arm64 libraries come from. Part of the cache
 * key, so a sysroot laid out without them is left alone.
 */
export const SYSROOT_DPKG = 'var/lib/dpkg';
const SYSROOT_OS_RELEASE = 'etc/os-release';

export class MissingPackagesError extends Error {}

function found(command) {
  return spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0;
}

/** Installs every missing package of `needed` with apt-get; throws one clear line when it cannot. */
export function ensureDebianPackages({
  needed = BUILD_PACKAGES,
  purpose = 'the build, the image and the release',
  log = (line) => process.stderr.write(`${line}\n`),
} = {}) {
  const missing = needed.filter(({ command }) => !found(command));
  if (missing.length === 0) return [];
  const names = missing.map(({ pkg }) => pkg);
  requireRoot(`missing ${names.join(', ')}: install them as root (Debian: apt-get install -y ${names.join(' ')})`);
  log(`installing ${names.join(' ')} with apt-get (needed by ${purpose})`);
  aptGet(['update', '-qq']);
  const plain = missing.filter(({ recommends }) => recommends !== false).map(({ pkg }) => pkg);
  const bare = missing.filter(({ recommends }) => recommends === false).map(({ pkg }) => pkg);
  if (plain.length > 0) aptGet(['install', '-y', '-qq', ...plain]);
  if (bare.length > 0) aptGet(['install', '-y', '-qq', '--no-install-recommends', ...bare]);
  return names;
}

/**
 * The directory holding Debian's arm64 libc6, libgcc-s1 and libstdc++6 (ARM64_PACKAGES) unpacked
 * as on an arm64 machine: the loader at /lib/ld-linux-aarch64.so.1, the libraries under
 * /lib/aarch64-linux-gnu. Made once per set of versions (adds the arm64 architecture to dpkg when
 * missing, then `apt-get download`); later calls only look.
 */
export function ensureArm64Sysroot({ log = (line) => process.stderr.write(`${line}\n`) } = {}) {
  const key = `${Object.entries(ARM64_PACKAGES)
    .map(([name, version]) => `${name}_${version}`)
    .join('+')}+dpkg`.replace(/[^A-Za-z0-9._+-]/g, '_');
  const sysroot = join(SYSROOT_CACHE, key);
  if (['lib/ld-linux-aarch64.so.1', `${SYSROOT_DPKG}/status`, SYSROOT_OS_RELEASE].every((path) => existsSync(join(sysroot, path)))) return sysroot;
  const wanted = Object.entries(ARM64_PACKAGES).map(([name, version]) => `${name}:arm64=${version}`);
  requireRoot(`the arm64 libraries are missing from ${sysroot}: run node scripts/debian.mjs as root once (it runs apt-get download ${wanted.join(' ')})`);
  const foreign = spawnSync('dpkg', ['--print-foreign-architectures'], { encoding: 'utf8' });
  if (!(foreign.stdout ?? '').split('\n').includes('arm64')) {
    log('adding the arm64 architecture to dpkg (for apt-get download of arm64 libraries; nothing arm64 is installed)');
    run('dpkg', ['--add-architecture', 'arm64']);
    aptGet(['update', '-qq']);
  }
  unpackDebianPackages(wanted, SYSROOT_CACHE, sysroot, 'ARM64_PACKAGES in scripts/debian.mjs');
  log(`${sysroot}: arm64 libraries from ${wanted.join(' ')}`);
  return sysroot;
}

/**
 * `apt-get download`s the packages at their pinned versions (apt checks them against Debian's
 * signed index) and unpacks them all into `dest`, built aside under `cache` and moved in whole.
 */
export function unpackDebianPackages(wanted, cache, dest, pin) {
  mkdirSync(cache, { recursive: true });
  const work = mkdtempSync(join(cache, '.work-'));
  try {
    const download = () => spawnSync('apt-get', ['download', '-qq', ...wanted], { cwd: work, encoding: 'utf8', stdio: ['ignore', 'ignore', 'pipe'] });
    let result = download();
    if (result.status !== 0) {
      // Package lists older than the pins (a machine last updated before a point release): refresh once.
      aptGet(['update', '-qq']);
      result = download();
    }
    if (result.status !== 0) {
      throw new MissingPackagesError(
        `apt-get download ${wanted.join(' ')} failed: ${lastLines(result.stderr)} (a version Debian no longer carries: bump ${pin})`,
      );
    }
    const root = join(work, 'root');
    const debs = readdirSync(work)
      .filter((name) => name.endsWith('.deb'))
      .sort();
    for (const deb of debs) run('dpkg-deb', ['-x', join(work, deb), root]);
    recordPackages(
      debs.map((deb) => join(work, deb)),
      join(root, SYSROOT_DPKG),
      work,
    );
    // apt downloads from this machine's Debian release.
    mkdirSync(join(root, 'etc'), { recursive: true });
    writeFileSync(join(root, SYSROOT_OS_RELEASE), readFileSync('/etc/os-release'));
    rmSync(dest, { recursive: true, force: true });
    renameSync(root, dest);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** Writes dpkg's status file and each package's md5sums for `debs` into `admindir`, from the packages' own control files. */
function recordPackages(debs, admindir, work) {
  mkdirSync(join(admindir, 'info'), { recursive: true });
  const entries = debs.map((deb, index) => {
    const control = join(work, `control-${index}`);
    run('dpkg-deb', ['--control', deb, control]);
    const fields = readFileSync(join(control, 'control'), 'utf8').trimEnd();
    const field = (name) => new RegExp(`^${name}: (.+)$`, 'm').exec(fields)?.[1];
    const [pkg, arch] = [field('Package'), field('Architecture')];
    if (pkg === undefined || arch === undefined) throw new MissingPackagesError(`${deb} has no Package or Architecture field`);
    writeFileSync(join(admindir, 'info', `${pkg}:${arch}.md5sums`), readFileSync(join(control, 'md5sums')));
    // What dpkg writes for an installed package: its control fields with the state after the name.
    return fields.replace(/^(Package: .+)$/m, '$1\nStatus: install ok installed');
  });
  writeFileSync(join(admindir, 'status'), `${entries.join('\n\n')}\n`);
}

export function requireRoot(message) {
  if (!found('apt-get') || process.getuid?.() !== 0) throw new MissingPackagesError(message);
}

function aptGet(args) {
  const result = spawnSync('apt-get', args, {
    stdio: ['ignore', 'ignore', 'pipe'],
    encoding: 'utf8',
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  });
  if (result.status !== 0) throw new MissingPackagesError(`apt-get ${args.join(' ')} failed (exit ${result.status}): ${lastLines(result.stderr)}`);
}

function run(command, args) {
  const result = spawnSync(command, args, { stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' });
  if (result.status !== 0) throw new MissingPackagesError(`${command} ${args.join(' ')} failed (exit ${result.status}): ${lastLines(result.stderr)}`);
}

function lastLines(text) {
  return (text ?? '').trim().split('\n').slice(-2).join(' | ');
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  try {
    ensureDebianPackages();
    ensureArm64Sysroot();
  } catch (error) {
    console.error(error instanceof MissingPackagesError ? error.message : error);
    process.exit(1);
  }
}
