// The heavy builds (kube-apiserver, kube-controller-manager, syft: minutes each on a new machine)
// run in the background, one at a time and niced, started by the set-up of the test projects that
// need them; every other test runs meanwhile. A test that needs one waits for its file. Next to the
// file, `<file>.building` holds the building process's pid while it builds (a waiting test takes
// the file only once that is gone) and `<file>.failed` the reason a build failed, so a waiting test
// fails with that reason rather than at its deadline.
import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { pollFor } from './poll.js';

/** One build: `command` must leave `target` (or `partialPath(target)`, moved into place) and exit 0. */
export interface BackgroundBuild {
  readonly name: string;
  readonly target: string;
  readonly command: readonly string[];
  readonly cwd?: string;
  readonly env?: NodeJS.ProcessEnv;
}

/** Where a build may write before its file is whole: another process never runs a half-written binary. */
export const partialPath = (target: string): string => `${target}.partial-${process.pid}`;

/** Longer than the slowest build seen (kube-apiserver: about 7 min alone on 2 cores, more beside the tests). */
const BUILD_WAIT_MS = 45 * 60_000;

const building = (target: string): string => `${target}.building`;
const failed = (target: string): string => `${target}.failed`;

// One queue per process, whichever project's set-up adds to it: two Go builds at once would only share the cores.
// vitest.config.mts reads `pending` through the same global to put the files that wait last.
interface Queue {
  tail: Promise<void>;
  running: ChildProcess | undefined;
  pending: number;
  stopped: boolean;
}
const queueKey = Symbol.for('esm.background-builds');
const globals = globalThis as { [queueKey]?: Queue };
globals[queueKey] ??= { tail: Promise.resolve(), running: undefined, pending: 0, stopped: false };
const queue: Queue = globals[queueKey];

/** Queues each build whose target is missing; returns at once. */
export function startBuilds(builds: readonly BackgroundBuild[], log: (line: string) => void): void {
  for (const build of builds) {
    if (existsSync(build.target) || builderAlive(build.target)) continue;
    mkdirSync(dirname(build.target), { recursive: true });
    rmSync(failed(build.target), { force: true });
    writeFileSync(building(build.target), String(process.pid));
    queue.pending += 1;
    queue.tail = queue.tail
      .then(() => run(build, log))
      .finally(() => {
        queue.pending -= 1;
      });
  }
}

/** Stops the build under way and drops those queued: the run is over (Go's cache keeps what was compiled). */
export function stopBuilds(): void {
  queue.stopped = true;
  queue.running?.kill('SIGTERM');
}

async function run(build: BackgroundBuild, log: (line: string) => void): Promise<void> {
  if (queue.stopped) {
    rmSync(building(build.target), { force: true });
    return;
  }
  const [file, ...args] = build.command;
  if (file === undefined) throw new Error(`${build.name}: empty build command`);
  const logFile = `${build.target}.log`;
  const started = Date.now();
  log(`building ${build.name} in the background (log: ${logFile})`);
  const output = openSync(logFile, 'w');
  const child = spawn('nice', ['-n', '10', file, ...args], { cwd: build.cwd, env: build.env ?? process.env, stdio: ['ignore', output, output] });
  closeSync(output);
  queue.running = child;
  const exit = await new Promise<string>((resolve) => {
    child.once('error', (error) => resolve(error.message));
    child.once('exit', (code, signal) => resolve(signal === null ? `exit ${code}` : `signal ${signal}`));
  });
  queue.running = undefined;
  if (exit === 'exit 0' && existsSync(partialPath(build.target))) renameSync(partialPath(build.target), build.target);
  rmSync(partialPath(build.target), { force: true });
  if (exit === 'exit 0' && existsSync(build.target)) {
    log(`built ${build.name} in ${Math.round((Date.now() - started) / 1_000)} s`);
  } else {
    const tail = readFileSync(logFile, 'utf8').slice(-1_500);
    writeFileSync(failed(build.target), `${build.command.join(' ')} failed (${exit}): ${tail}`);
  }
  rmSync(building(build.target), { force: true });
}

function builderAlive(target: string): boolean {
  const pid = existsSync(building(target)) ? Number(readFileSync(building(target), 'utf8')) : Number.NaN;
  if (!Number.isInteger(pid)) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * The built file: at once when it is there, after the background build when one is under way, or
 * from `buildHere` (a build in this process) when none is, e.g. a benchmark run outside the tests.
 */
export async function builtFile(target: string, buildHere: () => string): Promise<string> {
  return pollFor(
    `the background build of ${target}`,
    () => {
      if (builderAlive(target)) return undefined;
      if (existsSync(target)) return target;
      if (existsSync(failed(target))) throw new Error(readFileSync(failed(target), 'utf8'));
      return buildHere();
    },
    { timeoutMs: BUILD_WAIT_MS, everyMs: 1_000 },
  );
}
