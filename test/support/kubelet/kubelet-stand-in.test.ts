// The kubelet stand-in itself, against the rules kubelet follows (hooks, signals, grace period), with
// trivial containers: if it does not terminate pods as kubelet does, no end-to-end test means much.
import { afterEach, describe, expect, it } from 'vitest';
import { Pod, type PodSpec } from './pod.js';

const pods: Pod[] = [];
afterEach(async () => {
  for (const pod of pods.splice(0)) await pod.destroy();
});

const NODE = process.execPath;
/** A container that prints "up", then lives until signalled; on SIGTERM it exits after `termDelayMs` (Infinity: never). */
function program(termDelayMs: number): string[] {
  const onTerm = Number.isFinite(termDelayMs) ? `setTimeout(() => process.exit(0), ${termDelayMs})` : '0';
  return [NODE, '-e', `process.on('SIGTERM', () => { ${onTerm} }); console.log(JSON.stringify({ up: true })); setInterval(() => {}, 1e6);`];
}
/** An exec hook that takes `ms` milliseconds. */
function hook(ms: number): { exec: { command: string[] } } {
  return { exec: { command: [NODE, '-e', `setTimeout(() => {}, ${ms})`] } };
}

async function start(spec: PodSpec): Promise<Pod> {
  const pod = await Pod.start({
    ...spec,
    containers: spec.containers.map((c) => ({ ready: (container) => container.waitForLine((l) => l['up'] === true), ...c })),
  });
  pods.push(pod);
  return pod;
}

describe('kubelet stand-in', () => {
  it('runs every preStop hook at once and sends SIGTERM to each container when its own hook returns', async () => {
    const pod = await start({
      terminationGracePeriodSeconds: 30,
      containers: [
        { name: 'slow', command: program(0), preStop: hook(1_200) },
        { name: 'fast', command: program(0), preStop: hook(100) },
      ],
    });
    const timeline = await pod.terminate();
    const slowStart = timeline.find('prestop-start', 'slow')!;
    const fastStart = timeline.find('prestop-start', 'fast')!;
    // Concurrent, not one after the other: each started before the other one ended.
    expect(slowStart.t).toBeLessThanOrEqual(timeline.find('prestop-end', 'fast')!.t);
    expect(fastStart.t).toBeLessThanOrEqual(timeline.find('prestop-end', 'slow')!.t);
    expect(timeline.find('sigterm', 'fast')!.t).toBeLessThan(timeline.find('prestop-end', 'slow')!.t);
    expect(timeline.find('sigterm', 'slow')!.t).toBeGreaterThanOrEqual(timeline.find('prestop-end', 'slow')!.t);
    expect(timeline.find('sigkill')).toBeUndefined();
    expect(timeline.events.at(-1)?.kind).toBe('pod-gone');
  });

  it('sends SIGTERM even when the hook fails', async () => {
    const pod = await start({
      terminationGracePeriodSeconds: 30,
      containers: [{ name: 'c', command: program(0), preStop: { exec: { command: [NODE, '-e', 'process.exit(3)'] } } }],
    });
    const timeline = await pod.terminate();
    expect(timeline.find('prestop-end', 'c')?.detail).toBe('exit 3');
    expect(timeline.find('sigterm', 'c')).toBeDefined();
  });

  it('SIGKILLs at the grace period when a container ignores SIGTERM', async () => {
    const pod = await start({ terminationGracePeriodSeconds: 0.8, containers: [{ name: 'stubborn', command: program(Infinity) }] });
    const timeline = await pod.terminate();
    expect(timeline.find('sigkill', 'stubborn')!.t).toBeGreaterThanOrEqual(800);
    expect(timeline.find('grace-extension')).toBeUndefined(); // no hook was running
    expect(timeline.find('container-exit', 'stubborn')?.detail).toBe('killed by SIGKILL');
  });

  it('grants a one-time 2 s extension while a hook still runs, then kills the hook and the container', async () => {
    const pod = await start({ terminationGracePeriodSeconds: 0.5, containers: [{ name: 'c', command: program(0), preStop: hook(60_000) }] });
    const timeline = await pod.terminate();
    expect(timeline.find('grace-extension')).toBeDefined();
    expect(timeline.find('sigkill', 'c')!.t).toBeGreaterThanOrEqual(2_500);
    expect(timeline.find('prestop-end', 'c')?.detail).toBe('killed at the grace period');
  });

  it('ends an httpGet hook on any status and on a refused connection', async () => {
    const pod = await start({
      terminationGracePeriodSeconds: 30,
      containers: [{ name: 'c', command: program(0), preStop: { httpGet: { port: 1, path: '/x' } } }],
    });
    const timeline = await pod.terminate();
    expect(timeline.find('prestop-end', 'c')?.detail).toBe('error ECONNREFUSED');
    expect(timeline.find('sigterm', 'c')).toBeDefined();
  });

  it('stops native sidecars only after every regular container has exited, in reverse order', async () => {
    const pod = await start({
      terminationGracePeriodSeconds: 30,
      initContainers: [
        { name: 'sidecar-a', command: program(0), ready: (c) => c.waitForLine((l) => l['up'] === true) },
        { name: 'sidecar-b', command: program(0), ready: (c) => c.waitForLine((l) => l['up'] === true), preStop: hook(50) },
      ],
      containers: [{ name: 'main', command: program(300) }],
    });
    const timeline = await pod.terminate();
    const mainExit = timeline.find('container-exit', 'main')!;
    expect(timeline.find('prestop-start', 'sidecar-b')!.t).toBeGreaterThanOrEqual(mainExit.t);
    expect(timeline.find('sigterm', 'sidecar-a')!.t).toBeGreaterThanOrEqual(timeline.find('container-exit', 'sidecar-b')!.t);
  });

  it('restarts one container after a liveness failure, running only its own hook', async () => {
    const pod = await start({
      terminationGracePeriodSeconds: 30,
      containers: [
        { name: 'other', command: program(0), preStop: hook(10) },
        { name: 'probed', command: program(0), preStop: hook(10) },
      ],
    });
    const firstPid = pod.container('probed').child.pid;
    await pod.restartContainer('probed');
    expect(pod.container('probed').child.pid).not.toBe(firstPid);
    expect(pod.container('probed').running).toBe(true);
    expect(pod.container('other').running).toBe(true);
    expect(pod.timeline.events.map((e) => `${e.kind} ${e.container}`)).toEqual(['prestop-start probed', 'prestop-end probed', 'sigterm probed', 'container-restart probed']);
  });

  it('gives exec hooks the container environment, with PID 1 stdout pointing at the container log', async () => {
    const pod = await start({
      terminationGracePeriodSeconds: 30,
      containers: [
        {
          name: 'c',
          command: program(0),
          env: { ROLE: 'sidecar' },
          preStop: {
            exec: {
              command: [NODE, '-e', `require('fs').appendFileSync(process.env.ENVOY_SHUTDOWN_HOOK_LOG_PATH, JSON.stringify({ hook: process.env.ROLE, k8s: process.env.KUBERNETES_SERVICE_HOST }) + '\\n')`],
            },
          },
        },
      ],
    });
    await pod.terminate();
    expect(pod.container('c').logs()).toEqual([{ up: true }, { hook: 'sidecar', k8s: '10.96.0.1' }]);
  });
});
