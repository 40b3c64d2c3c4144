// Reaching into a pod that has only its own loopback (`podman pod create --network none`, where the
// peers' fixed ports cannot collide with anything), and out of it: a forwarder inside the pod's
// network namespace and one here meet on Unix sockets in a temp dir. Each pod port gets a loopback
// port of this machine; each backend the pod's Envoy dials on its loopback reaches a server here.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { type End, forward, portOf } from './forward.js';

export interface PodBridge {
  /** This machine's loopback port that reaches the pod's `inPod` port. */
  port(inPod: number): number;
  /** For an error message: whether the forwarder inside the pod still runs, and what it said. */
  describe(): string;
  close(): void;
}

const RUNNER = resolve('test/.build/netns-bridge-main.cjs');
/** The bridge's niceness: ahead of the pods' processes (0). */
const BRIDGE_NICENESS = -10;
/** nsenter and a node process starting on a busy machine. */
const READY_WITHIN_MS = 60_000;

/** `pid`: any process in the pod (its network namespace is the pod's). */
export async function bridgePod(pid: string, options: { ports: readonly number[]; backends: ReadonlyArray<{ inPod: number; to: End }> }): Promise<PodBridge> {
  const dir = mkdtempSync(join(tmpdir(), 'esm-bridge-'));
  const servers: Server[] = [];
  const ports = new Map<number, number>();
  const plan: Array<{ from: End; to: End }> = [];
  try {
    for (const backend of options.backends) {
      const path = join(dir, `out-${backend.inPod}.sock`);
      servers.push(await forward({ path }, backend.to));
      plan.push({ from: { host: '127.0.0.1', port: backend.inPod }, to: { path } });
    }
    for (const inPod of options.ports) {
      const path = join(dir, `in-${inPod}.sock`);
      plan.push({ from: { path }, to: { host: '127.0.0.1', port: inPod } });
      const server = await forward({ host: '127.0.0.1', port: 0 }, { path });
      servers.push(server);
      ports.set(inPod, portOf(server));
    }
    // It stands in for the pod's network, which the kernel carries ahead of any process: at a
    // higher priority than the pods' own processes, so a busy machine starting other pods delays
    // it less (without the privilege, nice says so on stderr and runs it as it is).
    const child = spawn('nsenter', ['-t', pid, '-n', 'nice', '-n', String(BRIDGE_NICENESS), process.execPath, RUNNER, JSON.stringify(plan)], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let err = '';
    let exit: string | undefined;
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err = (err + chunk).slice(-4_000)));
    child.once('exit', (code, signal) => (exit = `exited ${code ?? signal}`));
    await new Promise<void>((ready, fail) => {
      const timer = setTimeout(() => fail(new Error(`the pod's bridge did not start in ${READY_WITHIN_MS} ms: ${err}`)), READY_WITHIN_MS);
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
        if (!chunk.includes('ready')) return;
        clearTimeout(timer);
        ready();
      });
      child.once('error', (error) => fail(new Error(`cannot run nsenter (util-linux), needed to reach the pod: ${error.message}`)));
      child.once('exit', (code) => fail(new Error(`the pod's bridge exited ${code}: ${err}`)));
    });
    return {
      port(inPod) {
        const port = ports.get(inPod);
        if (port === undefined) throw new Error(`port ${inPod} of the pod is not bridged`);
        return port;
      },
      describe: () => `the pod's bridge (nsenter -t ${pid}) ${exit ?? 'runs'}${err === '' ? '' : `: ${err}`}`,
      close() {
        child.kill('SIGKILL');
        // Not waiting for their connections: the pod is gone, and each one ends with it.
        for (const server of servers) server.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    for (const server of servers) server.close();
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}
