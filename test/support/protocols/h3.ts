// The HTTP/3 client (h3_client.py, on aioquic from test/setup/aioquic.mjs) as a child process the
// tests drive: requests go in on stdin, its events come back as parsed JSON lines to wait on.
import { type ChildProcess, spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { REQUEST_TIMEOUT_MS } from './clients.js';

const CLIENT = resolve('test/support/protocols/h3_client.py');

interface H3Event {
  readonly event: 'connected' | 'sent' | 'response' | 'body_end' | 'goaway' | 'stream_reset' | 'closed' | 'error';
  readonly stream?: number;
  readonly status?: number;
  readonly headers?: Record<string, string>;
  readonly error_code?: number;
  readonly reason?: string;
  /** Date.now() when the line arrived. */
  readonly at: number;
}

export interface H3Client {
  readonly child: ChildProcess;
  readonly events: readonly H3Event[];
  /** Sends `GET path` on a new stream. */
  get(path: string): void;
  /** One GET: resolves with its status once the body ended; rejects on a reset, a close or after `timeoutMs`. */
  request(path: string, timeoutMs?: number): Promise<number>;
  /** Resolves with the first event so far or to come matching `predicate`; rejects if the client exits first or after `timeoutMs`. */
  waitFor(predicate: (event: H3Event) => boolean, timeoutMs?: number): Promise<H3Event>;
  /** Closes the connection and waits for the client to exit. */
  close(): Promise<void>;
}

/** The aioquic environment's python, made by test/setup/aioquic.mjs when missing (the global setup does it once). */
export async function aioquicPython(): Promise<string> {
  const script = (await import(pathToFileURL(resolve('test/setup/aioquic.mjs')).href)) as { ensureAioquic?: () => string };
  if (typeof script.ensureAioquic !== 'function') throw new Error('test/setup/aioquic.mjs no longer exports ensureAioquic');
  return script.ensureAioquic();
}

/**
 * Connects to a QUIC listener on 127.0.0.1 and resolves once the handshake is done; with
 * `netnsPid`, from inside that process's network namespace (a pod's own loopback: UDP is not bridged).
 */
export async function connectH3(port: number, serverName: string, netnsPid?: string): Promise<H3Client> {
  const command = [await aioquicPython(), CLIENT, '127.0.0.1', String(port), serverName];
  const [file, ...args] = netnsPid === undefined ? command : ['nsenter', '-t', netnsPid, '-n', ...command];
  const child = spawn(file as string, args, { stdio: ['pipe', 'pipe', 'pipe'] });
  const events: H3Event[] = [];
  const wakers = new Set<() => void>();
  let stderr = '';
  let pending = '';
  let exited = false;
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    pending += chunk;
    for (let newline = pending.indexOf('\n'); newline >= 0; newline = pending.indexOf('\n')) {
      events.push({ ...(JSON.parse(pending.slice(0, newline)) as Omit<H3Event, 'at'>), at: Date.now() });
      pending = pending.slice(newline + 1);
    }
    for (const wake of wakers) wake();
  });
  const exit = new Promise<void>((done) =>
    child.once('close', () => {
      exited = true;
      for (const wake of wakers) wake();
      done();
    }),
  );
  const waitFor = (predicate: (event: H3Event) => boolean, timeoutMs = 10_000): Promise<H3Event> =>
    new Promise((resolvePromise, reject) => {
      const timer = setTimeout(() => finish(new Error(`no such HTTP/3 event within ${timeoutMs} ms: ${JSON.stringify(events)} ${stderr}`)), timeoutMs);
      const check = (): void => {
        const found = events.find(predicate);
        if (found !== undefined) finish(undefined, found);
        else if (exited) finish(new Error(`the HTTP/3 client exited first: ${JSON.stringify(events)} ${stderr.slice(-1_000)}`));
      };
      function finish(error?: Error, event?: H3Event): void {
        clearTimeout(timer);
        wakers.delete(check);
        if (error === undefined) resolvePromise(event as H3Event);
        else reject(error);
      }
      wakers.add(check);
      check();
    });
  const get = (path: string): void => void child.stdin?.write(`get ${path}\n`);
  const client: H3Client = {
    child,
    events,
    get,
    waitFor,
    async request(path, timeoutMs = REQUEST_TIMEOUT_MS) {
      const before = new Set<H3Event>(events);
      get(path);
      const sent = await waitFor((e) => !before.has(e) && e.event === 'sent', timeoutMs);
      const ends = (e: H3Event): boolean =>
        (e.stream === sent.stream && (e.event === 'body_end' || e.event === 'stream_reset')) ||
        (!before.has(e) && (e.event === 'closed' || e.event === 'error'));
      const end = await waitFor(ends, timeoutMs);
      if (end.event !== 'body_end') throw new Error(`${path}: ${JSON.stringify(end)}`);
      return events.find((e) => e.event === 'response' && e.stream === sent.stream)?.status ?? 0;
    },
    async close() {
      if (!exited) child.stdin?.end('close\n');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exit;
      clearTimeout(timer);
    },
  };
  try {
    await waitFor((event) => event.event === 'connected');
  } catch (error) {
    await client.close();
    throw error;
  }
  return client;
}
