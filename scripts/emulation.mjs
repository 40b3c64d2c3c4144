// Runs arm64 programs on this x86-64 machine for real, under qemu's user-mode emulator, without
// relying on the host's binfmt_misc or changing it: each run gets a user and mount namespace of its
// own (`unshare -Urm`) with a binfmt_misc instance of its own (Linux 6.7 and later), in which
// qemu-aarch64-static is registered for arm64 ELF files, and where Debian's arm64 loader and
// libraries (the sysroot scripts/debian.mjs lays out) sit where an arm64 Debian keeps them, over the
// host's. So an arm64 executable, `install`'s search for its libraries and the installed copy's
// check all meet what they would on an arm64 machine. Only the CPU is emulated.
import { existsSync } from 'node:fs';

export const QEMU = '/usr/bin/qemu-aarch64-static';

/** qemu's own binfmt_misc rule for arm64 ELF executables (magic and mask), with F: the interpreter is opened now, not per exec (so it works in a chroot). */
const QEMU_AARCH64_RULE = `:esm-aarch64:M::\\x7f\\x45\\x4c\\x46\\x02\\x01\\x01\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x02\\x00\\xb7\\x00:\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\x00\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xfe\\xff\\xff\\xff:${QEMU}:F`;

/**
 * In the namespace: lays the sysroot over the host's library directories (read-only overlays),
 * mounts the namespace's own binfmt_misc, registers qemu, then becomes the command (same PID:
 * signals reach qemu, which passes them on). $0 is the sysroot, $1 the rule.
 */
const SETUP = [
  'overlay() { mount -t overlay overlay -o "lowerdir=$1:$2" "$2" || { echo "arm64 emulation: cannot mount an overlay on $2" >&2; exit 126; }; }',
  'if [ -L /lib ]; then overlay "$0/lib:$0/usr/lib" /usr/lib; else overlay "$0/lib" /lib; overlay "$0/usr/lib" /usr/lib; fi',
  'mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc 2>/dev/null || { echo "arm64 emulation: cannot mount binfmt_misc in a user namespace (needs Linux 6.7 or later)" >&2; exit 126; }',
  'printf "%s" "$1" > /proc/sys/fs/binfmt_misc/register || exit 126',
  'shift',
  'exec "$@"',
].join('\n');

export class EmulationError extends Error {}

/**
 * The command that runs `command` (an x86-64 program or an arm64 one, by path: the kernel hands
 * arm64 ones to qemu) in the namespace described above, with the arm64 libraries from `sysroot`.
 */
export function inArm64Namespace(sysroot, command) {
  if (!existsSync(QEMU)) throw new EmulationError(`${QEMU} is missing: install the Debian package qemu-user-static (node scripts/debian.mjs does)`);
  return ['/usr/bin/unshare', '--user', '--map-root-user', '--mount', '/bin/sh', '-c', SETUP, sysroot, QEMU_AARCH64_RULE, ...command];
}
