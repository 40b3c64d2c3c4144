// A child process of the many-waiters benchmark: opens `count` connections to the manager, sends
// one `GET /shutdown/ready` on each, and records when each answer's first bytes arrive. Raw
// sockets, no HTTP parser: the client side must cost as little as possible.
//
//   node waiter-client.cjs <port> <count> <timeoutMs>
// stdout: one JSON line {"event":"sent"} once every request is written, then one summary line.
import { connect, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';

export interface WaiterClientSummary {
  readonly event: 'done';
  readonly answered: number;
  readonly ok: number;
  readonly failed: number;
  /** Epoch milliseconds (fractional) of the first and last answers. */
  readonly first: number;
  readonly last: number;
}

const REQUEST = 'GET /shutdown/ready HTTP/1.1\r\nHost: shutdown-manager\r\n\r\n';
const BATCH = 250;

const epochNow = (): number => performance.timeOrigin + performance.now();

async function main(): Promise<void> {
  const [port, count, timeoutMs] = process.argv.slice(2).map(Number) as [number, number, number];
  let answered = 0;
  let ok = 0;
  let failed = 0;
  let first = Number.POSITIVE_INFINITY;
  let last = 0;
  let finish: () => void = () => {};
  const allAnswered = new Promise<void>((resolve) => (finish = resolve));
  const settle = (status: 'ok' | 'failed'): void => {
    const at = epochNow();
    answered += 1;
    if (status === 'ok') ok += 1;
    else failed += 1;
    first = Math.min(first, at);
    last = Math.max(last, at);
    if (answered === count) finish();
  };

  const open = (): Promise<void> =>
    new Promise((resolve) => {
      const socket: Socket = connect({ port, host: '127.0.0.1', noDelay: true });
      let settled = false;
      socket.once('connect', () => {
        socket.write(REQUEST);
        resolve();
      });
      socket.once('data', (chunk: Buffer) => {
        settled = true;
        settle(chunk.toString('latin1', 9, 12) === '200' ? 'ok' : 'failed');
        socket.destroy();
      });
      socket.once('error', () => {
        if (!settled) settle('failed');
        settled = true;
        resolve();
      });
    });

  for (let opened = 0; opened < count; opened += BATCH) {
    await Promise.all(Array.from({ length: Math.min(BATCH, count - opened) }, open));
  }
  process.stdout.write(`${JSON.stringify({ event: 'sent' })}\n`);
  const timer = setTimeout(finish, timeoutMs);
  await allAnswered;
  clearTimeout(timer);
  const summary: WaiterClientSummary = { event: 'done', answered, ok, failed, first, last };
  process.stdout.write(`${JSON.stringify(summary)}\n`, () => process.exit(0));
}

void main();
