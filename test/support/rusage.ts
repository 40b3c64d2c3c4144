// A child's CPU time and peak memory as the kernel counts them: the command runs under a small
// python3 wrapper whose wait4 gets the child's rusage at its exit (ru_maxrss: the kernel's VmHWM,
// in KiB), which Node cannot read for a child. A SIGINT to the wrapper goes on to the child (how
// `status --watch` is stopped); the wrapper exits with the child's code.
import { readFileSync } from 'node:fs';

const RUSAGE_WRAPPER = `
import json, os, signal, sys
pid = os.fork()
if pid == 0:
    os.execv(sys.argv[2], sys.argv[2:])
signal.signal(signal.SIGINT, lambda *_: os.kill(pid, signal.SIGINT))
_, status, ru = os.wait4(pid, 0)
with open(sys.argv[1], 'w') as out:
    json.dump({'cpuMs': (ru.ru_utime + ru.ru_stime) * 1000, 'peakKiB': ru.ru_maxrss}, out)
code = os.waitstatus_to_exitcode(status)
sys.exit(code if code >= 0 else 128 - code)
`;

export interface Rusage {
  readonly cpuMs: number;
  readonly peakKiB: number;
}

/** `command` (its first word an absolute path: no PATH lookup) under the wrapper, which writes its Rusage to `usageFile` as JSON. */
export function underWait4(usageFile: string, command: readonly string[]): string[] {
  return ['python3', '-c', RUSAGE_WRAPPER, usageFile, ...command];
}

/** What the wrapper wrote once the child exited. */
export function readRusage(usageFile: string): Rusage {
  return JSON.parse(readFileSync(usageFile, 'utf8')) as Rusage;
}
