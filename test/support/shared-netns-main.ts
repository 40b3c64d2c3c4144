// Run by runSandboxed (test/support/sandbox.ts) in a network namespace of its own: writes the given
// files, starts the given processes side by side in that one namespace (as pods with hostNetwork
// share a node's), waits until each given request is answered, and prints the answers and whether
// each process still runs. Every process is stopped before it returns.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { pollFor } from './poll.js';
import { runJsonEntry } from './process-entry.js';
import { type RawAnswer, rawRequest } from './raw-http.js';

export interface SharedNetnsInput {
  /** Written before anything starts: absolute path → content. */
  readonly files: Readonly<Record<string, string>>;
  readonly processes: ReadonlyArray<{ readonly name: string; readonly command: readonly string[] }>;
  /** Each sent (raw) until it gets an HTTP answer. */
  readonly requests: ReadonlyArray<{ readonly name: string; readonly port: number; readonly request: string }>;
  readonly timeoutMs: number;
}

export interface SharedNetnsOutput {
  /** Each request's status line, or `<process> exited <code>` when a process exited before the answer. */
  readonly answers: Readonly<Record<string, string>>;
  /** Each process: `running`, or how it exited, with the end of its stderr. */
  readonly processes: Readonly<Record<string, { readonly state: string; readonly log: string }>>;
}

async function run(input: SharedNetnsInput): Promise<SharedNetnsOutput> {
  for (const [path, content] of Object.entries(input.files)) {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, content);
  }
  const started = input.processes.map(({ name, command }) => {
    const [binary = '', ...args] = command;
    const child = spawn(binary, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    const state = { name, child, exit: undefined as string | undefined, log: '' };
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (state.log = (state.log + chunk).slice(-4_000)));
    child.once('exit', (code, signal) => (state.exit = `exited ${code ?? signal}`));
    return state;
  });
  try {
    const answers: Record<string, string> = {};
    for (const { name, port, request } of input.requests) {
      // A process that exits ends every wait: nothing is answered on a guess.
      const gone = (): string | undefined => started.filter((p) => p.exit !== undefined).map((p) => `${p.name} ${p.exit ?? ''}`)[0];
      answers[name] = await pollFor<string>(
        `an answer to ${name} on port ${port}`,
        async () =>
          gone() ??
          (await rawRequest(port, request).then(
            (a: RawAnswer) => a.statusLine,
            () => undefined,
          )),
        {
          timeoutMs: input.timeoutMs,
          lastSeen: () => started.map((p) => `${p.name}: ${p.exit ?? 'running'} ${p.log.slice(-300)}`).join('; '),
        },
      );
    }
    return { answers, processes: Object.fromEntries(started.map((p) => [p.name, { state: p.exit ?? 'running', log: p.log }])) };
  } finally {
    await Promise.all(started.map(({ child }) => stop(child)));
  }
}

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

runJsonEntry(run);
