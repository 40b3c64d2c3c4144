// Timings of child processes shared by the start-up benches: exec to exit, exec to the first admin
// request a relay in front of Envoy receives, and whether a port takes connections yet.
import { type AddressInfo, connect, createServer } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { DrainTarget } from './drain-target.js';
import { spawnTimed } from './processes.js';

/** Wall time of one process, exec to exit, on this process's clock. */
export async function wallTime(command: readonly string[]): Promise<number> {
  const child = spawnTimed(command);
  const exit = await child.exited;
  if (exit.code !== 0) throw new Error(`${command.join(' ')} exited ${exit.code ?? exit.signal}: ${exit.stderr}`);
  return exit.at - child.startedAt;
}

/** Exec of `command` to the moment Envoy's admin relay receives its first admin call; then it is killed. */
export async function toFirstAdminCall(command: readonly string[], target: DrainTarget): Promise<number> {
  const firstCall = target.nextCall('/healthcheck/fail');
  const child = spawnTimed(command);
  const call = await Promise.race([
    firstCall,
    child.exited.then((exit) => Promise.reject(new Error(`${command.join(' ')} exited first (${exit.code}): ${exit.stderr}`))),
  ]);
  child.child.kill('SIGKILL');
  await child.exited;
  return call.receivedAt - child.startedAt;
}

/** When a TCP connect to 127.0.0.1:`port` succeeds, on performance.now(); undefined when refused. */
export function connectsAt(port: number): Promise<number | undefined> {
  return new Promise((resolvePromise) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      resolvePromise(performance.now());
      socket.destroy();
    });
    socket.once('error', () => resolvePromise(undefined));
  });
}

/** A port nothing listens on right now. */
export function freePort(): Promise<number> {
  return new Promise((resolvePromise, reject) => {
    const server = createServer().once('error', reject);
    server.listen({ host: '127.0.0.1', port: 0 }, () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolvePromise(port));
    });
  });
}
