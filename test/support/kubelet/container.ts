// A "container": one process started from a command, with its own environment. Its stdout is
// appended to a log file that stands for PID 1's stdout (what `kubectl logs` shows), so a hook
// that writes to /proc/1/fd/1 can be pointed at the same file.
import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream, readFileSync, type WriteStream } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

export type JsonLine = Record<string, unknown>;

export interface ContainerCommand {
  readonly name: string;
  readonly command: readonly string[];
  readonly env?: Readonly<Record<string, string>>;
}

export interface ContainerExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly at: number;
}

export class Container {
  readonly name: string;
  readonly logFile: string;
  readonly env: Readonly<Record<string, string>>;
  readonly child: ChildProcess;
  readonly exited: Promise<ContainerExit>;
  /** Date.now() when the process was spawned. */
  readonly startedAt = Date.now();
  /** Lines of this process's own stdout, parsed when they are JSON. */
  readonly lines: JsonLine[] = [];
  #stderr = '';
  #log: WriteStream;
  #watchers = new Set<() => void>();
  #exit: ContainerExit | undefined;

  constructor(spec: ContainerCommand, logDir: string, baseEnv: Readonly<Record<string, string>>) {
    this.name = spec.name;
    this.logFile = join(logDir, `${spec.name}.log`);
    // A hook that copies its logs to /proc/1/fd/1 is pointed at this file: that is what
    // /proc/1/fd/1 is inside this container.
    this.env = { ...baseEnv, ENVOY_SHUTDOWN_HOOK_LOG_PATH: this.logFile, ...spec.env };
    this.#log = createWriteStream(this.logFile, { flags: 'a' });
    const [file, ...args] = spec.command as [string, ...string[]];
    this.child = spawn(file, args, { env: this.env, stdio: ['ignore', 'pipe', 'pipe'] });
    this.child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      this.#stderr += chunk;
    });
    if (this.child.stdout === null) throw new Error(`container ${spec.name}: spawned without a stdout pipe`);
    createInterface({ input: this.child.stdout }).on('line', (line) => {
      this.#log.write(`${line}\n`);
      try {
        this.lines.push(JSON.parse(line) as JsonLine);
      } catch {
        this.lines.push({ text: line });
      }
      for (const wake of this.#watchers) wake();
    });
    this.exited = new Promise((resolve) => {
      this.child.once('close', (code, signal) => {
        this.#exit = { code, signal, at: Date.now() };
        this.#log.end();
        for (const wake of this.#watchers) wake();
        resolve(this.#exit);
      });
    });
  }

  get running(): boolean {
    return this.#exit === undefined;
  }

  get stderr(): string {
    return this.#stderr;
  }

  signal(signal: NodeJS.Signals): void {
    if (this.running) this.child.kill(signal);
  }

  /** Everything in the container's log, including lines hooks copied there: `kubectl logs`. */
  logs(): JsonLine[] {
    return readFileSync(this.logFile, 'utf8')
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => {
        try {
          return JSON.parse(line) as JsonLine;
        } catch {
          return { text: line };
        }
      });
  }

  /** Resolves with the first stdout line matching `predicate`; rejects if the process exits first. */
  waitForLine(predicate: (line: JsonLine) => boolean, timeoutMs = 15_000): Promise<JsonLine> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => done(new Error(`${this.name}: no matching line in ${timeoutMs} ms; stderr: ${this.#stderr}`)), timeoutMs);
      const check = (): void => {
        const line = this.lines.find(predicate);
        if (line !== undefined) done(undefined, line);
        else if (!this.running) done(new Error(`${this.name} exited before a matching line; stderr: ${this.#stderr}`));
      };
      const done = (error?: Error, line?: JsonLine): void => {
        clearTimeout(timer);
        this.#watchers.delete(check);
        if (error !== undefined) reject(error);
        else resolve(line as JsonLine);
      };
      this.#watchers.add(check);
      check();
    });
  }
}
