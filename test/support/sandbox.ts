// Runs a generated pod where its fixed ports and paths cannot collide with anything: a user,
// network and mount namespace (`unshare -rnm`) with only a loopback interface, and a chroot whose
// /tmp, /admin and /bin are its own; the system directories, the repository, Node and Envoy are
// bound in at their own paths. The
// single executable is linked as /bin/contour and /esm-bin/envoy-gateway (on PATH), as the image
// links it.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';

const SETUP = `set -e
ip link set lo up
R="$1"; EXE="$2"; shift 2
mount -t tmpfs tmpfs "$R"
for d in usr lib lib32 lib64 libx32 etc dev proc sys; do
  if [ -L "/$d" ]; then ln -s "$(readlink "/$d")" "$R/$d"; elif [ -d "/$d" ]; then mkdir "$R/$d"; mount --rbind "/$d" "$R/$d"; fi
done
mkdir -m 1777 "$R/tmp"; mkdir "$R/admin" "$R/bin" "$R/esm-bin"
while [ "$1" != -- ]; do mkdir -p "$R$1"; mount --rbind "$1" "$R$1"; shift; done; shift
ln -s "$EXE" "$R/bin/contour"; ln -s "$EXE" "$R/esm-bin/envoy-gateway"
exec chroot "$R" "$@"`;

/**
 * Runs `runner` (a bundled Node script) in the sandbox with `payload` as JSON in argv[2] and
 * returns the JSON of its last stdout line. `binds`: more directories to see at their own paths.
 */
export async function runSandboxed<T>(runner: string, payload: unknown, binds: readonly string[] = []): Promise<T> {
  const root = mkdtempSync(join(tmpdir(), 'dropin-root-'));
  const executable = resolve('dist/envoy-shutdown-manager');
  // The repository (executable, runner, Envoy), Node and Envoy wherever they live, at the same paths inside.
  const bound = [...new Set([process.cwd(), dirname(process.execPath), ...binds])];
  const args = ['-rnm', 'sh', '-c', SETUP, 'sandbox', root, executable, ...bound, '--', process.execPath, runner, JSON.stringify(payload)];
  try {
    const { code, stdout, stderr } = await new Promise<{ code: number | null; stdout: string; stderr: string }>((done, fail) => {
      const child = spawn('unshare', args, { stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
      child.once('error', (error) => fail(new Error(`cannot run unshare (util-linux), needed for private ports and paths: ${error.message}`)));
      child.once('exit', (exitCode) => done({ code: exitCode, stdout: out, stderr: err }));
    });
    const last = stdout.trim().split('\n').at(-1) ?? '';
    if (code !== 0 || !last.startsWith('{')) throw new Error(`sandboxed pod failed (exit ${code}): ${stderr.slice(-2_000)}`);
    return JSON.parse(last) as T;
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
