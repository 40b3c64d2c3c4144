// Runs the built executable the way users and kubelet do: a child process with its own
// environment. Log lines come back parsed, so tests assert on fields rather than strings.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

export const BIN = resolve('bin/envoy-shutdown-manager');

export interface LogLine {
  readonly level: string;
  readonly msg: string;
  readonly time: string;
  readonly [field: string]: unknown;
}

export interface RunResult {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly logs: LogLine[];
  /** When the process exited, Date.now(). */
  readonly exitedAt: number;
}

export interface RunningCli {
  readonly child: ChildProcess;
  readonly startedAt: number;
  readonly logs: LogLine[];
  readonly result: Promise<RunResult>;
  /** Resolves with the first log line matching `predicate` (rejects if the process exits first). */
  waitForLog(predicate: (line: LogLine) => boolean, timeoutMs?: number): Promise<LogLine>;
}

/** A minimal environment: nothing from the test runner's shell leaks into the command. */
export function cleanEnv(extra: Record<string, string> = {}): Record<string, string> {
  return { PATH: process.env.PATH ?? '/usr/bin:/bin', ...extra };
}

export function startCli(
  args: readonly string[],
  env: Record<string, string> = cleanEnv(),
  command: readonly string[] = [BIN],
  as: { readonly uid?: number; readonly gid?: number } = {},
): RunningCli {
  const [file, ...prefix] = command as [string, ...string[]];
  const child = spawn(file, [...prefix, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'], ...as });
  const startedAt = Date.now();
  const logs: LogLine[] = [];
  const waiters = new Set<() => void>();
  let stdout = '';
  let stderr = '';
  let pending = '';
  let exited = false;
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
    pending += chunk;
    for (let newline = pending.indexOf('\n'); newline >= 0; newline = pending.indexOf('\n')) {
      const line = pending.slice(0, newline);
      pending = pending.slice(newline + 1);
      try {
        logs.push(JSON.parse(line) as LogLine);
      } catch {
        // not a log line (help text, text format): kept in stdout only
      }
    }
    for (const wake of waiters) wake();
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const result = new Promise<RunResult>((resolvePromise, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => {
      exited = true;
      for (const wake of waiters) wake();
      resolvePromise({ code, signal, stdout, stderr, logs, exitedAt: Date.now() });
    });
  });

  function waitForLog(predicate: (line: LogLine) => boolean, timeoutMs = 20_000): Promise<LogLine> {
    return new Promise((resolvePromise, reject) => {
      const timer = setTimeout(() => finish(new Error(`no matching log line within ${timeoutMs} ms; logs: ${stdout}${stderr}`)), timeoutMs);
      const check = (): void => {
        const found = logs.find(predicate);
        if (found !== undefined) finish(undefined, found);
        else if (exited) finish(new Error(`exited before a matching log line; logs: ${stdout}${stderr}`));
      };
      function finish(error?: Error, line?: LogLine): void {
        clearTimeout(timer);
        waiters.delete(check);
        if (error !== undefined) reject(error);
        else resolvePromise(line as LogLine);
      }
      waiters.add(check);
      check();
    });
  }
  return { child, startedAt, logs, result, waitForLog };
}

export function runCli(args: readonly string[], env?: Record<string, string>): Promise<RunResult> {
  return startCli(args, env).result;
}

/** A fresh temporary directory, removed by the returned cleanup. */
export function tempDir(prefix = 'esm-'): { path: string; cleanup: () => void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, cleanup: () => rmSync(path, { recursive: true, force: true }) };
}
