// Runs a bundled Node script in a network namespace of its own with only loopback up (`unshare -n`,
// as root: podman's containers, started from inside with the host network, share it, as hostNetwork
// pods share a node's). Nothing it binds or sends reaches the machine's own network. The script gets
// its input as JSON in argv[2] and prints its result as the last stdout line (process-entry.ts).
// The script and everything it started run in their own process group, killed at the deadline.
import { spawn } from 'node:child_process';

export async function runInPrivateNetns<T>(runner: string, payload: unknown, timeoutMs: number): Promise<T> {
  const args = ['-n', 'sh', '-c', 'ip link set lo up && exec "$@"', 'netns', process.execPath, runner, JSON.stringify(payload)];
  const { code, stdout, stderr } = await new Promise<{ code: number | null; stdout: string; stderr: string }>((done, fail) => {
    const child = spawn('unshare', args, { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out = (out + chunk).slice(-1_000_000)));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err = (err + chunk).slice(-20_000)));
    const kill = (): void => {
      if (child.pid !== undefined) {
        try {
          process.kill(-child.pid, 'SIGKILL');
        } catch {
          // Already gone.
        }
      }
    };
    const timer = setTimeout(() => {
      err += `\nkilled after ${timeoutMs} ms`;
      kill();
    }, timeoutMs);
    // Its own process group does not go with ours: a test process that ends takes it along.
    process.once('exit', kill);
    child.once('error', (error) => {
      clearTimeout(timer);
      fail(new Error(`cannot run unshare (util-linux), needed for a private network namespace: ${error.message}`));
    });
    child.once('exit', (exitCode) => {
      clearTimeout(timer);
      process.off('exit', kill);
      // Whatever the script left running in its group goes with it.
      kill();
      done({ code: exitCode, stdout: out, stderr: err });
    });
  });
  const last = stdout.trim().split('\n').at(-1) ?? '';
  if (code !== 0 || !last.startsWith('{')) throw new Error(`the run in a private network namespace failed (exit ${code}): ${stderr.slice(-4_000)}`);
  return JSON.parse(last) as T;
}
