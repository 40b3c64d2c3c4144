// Probes for a pod run inside a sandbox (test/dropin/support/pod.ts and the bench's peer pods): a port that
// accepts, an idle keep-alive connection, and bounds on waits the processes give no event for.
import { connect, type Socket } from 'node:net';
import { pollUntil } from './poll.js';

/** How long a start-up condition may take to hold. */
const START_BOUND_MS = 20_000;

/** A keep-alive connection that had one request answered (none when `http` is false), then stays open and silent. */
export function idleConnection(port: number, http = true): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('error', reject);
    socket.once('connect', () => {
      if (!http) return resolve(socket);
      socket.write('GET / HTTP/1.1\r\nhost: pod\r\n\r\n');
      socket.once('data', () => resolve(socket));
    });
  });
}

export function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}

/** Polls a start-up condition the process offers no event for; bounded. */
export function until(probe: () => Promise<boolean>, what: string, everyMs = 20): Promise<void> {
  return pollUntil(what, probe, { timeoutMs: START_BOUND_MS, everyMs });
}

/** `promise`, or an error naming `what` once `boundMs` have passed. */
export async function bounded<T>(promise: Promise<T>, what: string, boundMs: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: not within ${boundMs} ms`)), boundMs)));
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
