// Starts the Envoy stand-in as a child process (the bundle global-setup builds) and waits for it
// to say it is ready. For tests that need a real PID: signals, exit codes, a dying Envoy.
import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { resolve } from 'node:path';
import type { EnvoyStandInOptions } from './options.js';

/** Built from test/support/envoy-stand-in-main.ts by test/global-setup.ts; paths are from the repository root, where tests and the demo run. */
export const ENVOY_STAND_IN_BUNDLE = resolve('test/.build/envoy-stand-in-main.cjs');

export interface EnvoyProcess {
  child: ChildProcess;
  adminAddress: string;
  listeners: Record<string, number>;
  /** Every JSON line printed so far, 'ready' first; grows as the process runs. */
  events: Array<Record<string, unknown>>;
  /** Resolves with the exit code (null when killed by a signal). */
  exited: Promise<number | null>;
}

export async function startEnvoyProcess(options: EnvoyStandInOptions = {}, readyTimeoutMs = 10_000): Promise<EnvoyProcess> {
  const child = spawn(process.execPath, [ENVOY_STAND_IN_BUNDLE, JSON.stringify(options)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const events: Array<Record<string, unknown>> = [];
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));

  const ready = new Promise<Record<string, unknown>>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`envoy stand-in not ready after ${readyTimeoutMs} ms: ${stderr}`));
    }, readyTimeoutMs);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`envoy stand-in exited with ${code} before ready: ${stderr}`));
    });
    if (child.stdout === null) throw new Error('no stdout pipe');
    createInterface({ input: child.stdout }).on('line', (line) => {
      const event = JSON.parse(line) as Record<string, unknown>;
      events.push(event);
      if (event['event'] === 'ready') {
        clearTimeout(timer);
        resolve(event);
      }
    });
  });

  const event = await ready;
  return {
    child,
    adminAddress: String(event['adminAddress']),
    listeners: event['listeners'] as Record<string, number>,
    events,
    exited,
  };
}
