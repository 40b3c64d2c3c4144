// Ports for processes that must be told a port number up front (Envoy's admin API named in its own
// bootstrap, a pod's fixed ports mapped for the host network). Binding port 0, noting the number and
// letting it go races the kernel: it hands the same number to the next outgoing connection or port-0
// bind on the machine. So ports come from below the kernel's ephemeral range, where it never
// assigns any, each vitest worker from its own slice; a bind check skips any port in use.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

const LOWEST = 10_000;
const SLICES = 16;

function ephemeralLow(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > LOWEST + SLICES * 100 ? low : 32_768;
  } catch {
    return 32_768;
  }
}

const sliceSize = Math.floor((ephemeralLow() - LOWEST) / SLICES);
// vitest numbers its workers from 1; anything else (the bench, the demo) takes a slice by pid.
const slice = (Number(process.env.VITEST_POOL_ID ?? Number.NaN) || process.pid) % SLICES;
const sliceStart = LOWEST + slice * sliceSize;
let next = Math.floor(Math.random() * sliceSize);

function bindable(host: string, port: number): Promise<boolean> {
  const server = createServer();
  return new Promise((resolve) => {
    server.once('error', () => resolve(false));
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/** A port that is free on `host` now and that the kernel will not hand to anyone else. */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  for (let tries = 0; tries < sliceSize; tries += 1) {
    const port = sliceStart + (next++ % sliceSize);
    if (await bindable(host, port)) return port;
  }
  throw new Error(`no free port in ${sliceStart}-${sliceStart + sliceSize - 1} on ${host}`);
}

/** Listens on a port the kernel picks on 127.0.0.1, for servers whose port is read back, never told up front; resolves to it. */
export function listenOnLoopback(server: {
  listen(options: { host: string; port: number }, done: () => void): unknown;
  once(event: 'error', listener: (error: Error) => void): unknown;
  address(): unknown;
}): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: '127.0.0.1', port: 0 }, () => resolve((server.address() as { port: number }).port));
  });
}
