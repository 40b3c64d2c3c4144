// Runs `shutdown-manager` as a child process whose log goes to a file, as a container runtime
// would keep it, and reads that file back as JSON lines.
import { closeSync, fstatSync, mkdtempSync, openSync, readSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { http1Request } from '../../test/support/protocols/clients.js';
import { type SpawnOptions, sleep, spawnTimed, stopChild, type TimedChild, until } from './processes.js';

type LogLine = Readonly<Record<string, unknown>>;

/** Reads JSON lines appended to a file since the last call. */
class LogFile {
  #offset = 0;
  #partial = Buffer.alloc(0);
  readonly lines: LogLine[] = [];

  constructor(readonly path: string) {}

  /** Parses whatever was appended since the last call (only the new bytes are read); returns the new lines. */
  poll(): LogLine[] {
    const fd = openSync(this.path, 'r');
    let appended: Buffer;
    try {
      const size = fstatSync(fd).size;
      if (size <= this.#offset) return [];
      appended = Buffer.alloc(size - this.#offset);
      readSync(fd, appended, 0, appended.length, this.#offset);
      this.#offset = size;
    } finally {
      closeSync(fd);
    }
    const parts = Buffer.concat([this.#partial, appended]).toString('utf8').split('\n');
    this.#partial = Buffer.from(parts.pop() ?? '', 'utf8');
    const fresh: LogLine[] = [];
    for (const part of parts) {
      try {
        fresh.push(JSON.parse(part) as LogLine);
      } catch {
        // not a JSON log line
      }
    }
    this.lines.push(...fresh);
    return fresh;
  }

  async waitFor(predicate: (line: LogLine) => boolean, timeoutMs = 30_000, pollMs = 20): Promise<LogLine> {
    let found: LogLine | undefined = this.lines.find(predicate);
    const seen = (): boolean => {
      found ??= this.poll().find(predicate);
      return found !== undefined;
    };
    await until(seen, { timeoutMs, pollMs, what: 'a log line' });
    return found as LogLine;
  }
}

export interface RunningManager {
  readonly process: TimedChild;
  readonly port: number;
  readonly readyFile: string;
  readonly log: LogFile;
  stop(): Promise<void>;
}

/** A port nobody listens on right now (the kernel's choice for port 0, released at once). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen({ host: '127.0.0.1', port: 0 }, () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

async function healthy(port: number): Promise<boolean> {
  return (await http1Request({ port, path: '/healthz' })).status === 200;
}

/**
 * Starts the manager with its ready file in a fresh directory. Ready once /healthz answers, so
 * whatever the log level; the port is chosen here for the same reason.
 */
export async function startManager(
  command: readonly string[],
  args: readonly string[] = [],
  options: Omit<SpawnOptions, 'stdout'> = {},
): Promise<RunningManager> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-manager-'));
  const readyFile = join(dir, 'shutdown-ready');
  const logPath = join(dir, 'manager.log');
  const port = await freePort();
  const fd = openSync(logPath, 'w');
  const running = spawnTimed([...command, 'shutdown-manager', '--port', String(port), '--ready-file', readyFile, ...args], { ...options, stdout: fd });
  closeSync(fd);
  const stop = async (): Promise<void> => {
    await stopChild(running);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const deadline = performance.now() + 30_000;
    while (!(await healthy(port))) {
      if (running.child.exitCode !== null || running.child.signalCode !== null)
        throw new Error(`shutdown-manager exited (${(await running.exited).code}): ${(await running.exited).stderr}`);
      if (performance.now() > deadline) throw new Error('shutdown-manager did not answer /healthz within 30 s');
      await sleep(10);
    }
    return { process: running, port, readyFile, log: new LogFile(logPath), stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** GET /shutdown/ready on its own connection; resolves with performance.now() when the answer's headers arrive. */
export function awaitReady(port: number): Promise<{ status: number; at: number }> {
  return new Promise((resolvePromise, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/shutdown/ready', agent: false }, (res) => {
      const at = performance.now();
      res.resume();
      resolvePromise({ status: res.statusCode ?? 0, at });
    });
    req.on('error', reject);
    req.end();
  });
}
