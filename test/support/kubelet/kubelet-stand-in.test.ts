// The kubelet stand-in itself, against the rules kubelet v1.33 follows (rules.ts names the kubelet
// function of each: hooks, their targets, signals, grace periods, sidecar order, probes), with
// trivial containers: if it does not terminate pods as kubelet does, no end-to-end test means much.
import { afterEach, describe, expect, it } from 'vitest';
import { freePort } from '../ports.js';
import { Pod, type PodSpec } from './pod.js';
import { FAILED_PRESTOP_HOOK } from './rules.js';
import type { Timeline, TimelineEvent, TimelineEventKind } from './timeline.js';

const pods: Pod[] = [];
afterEach(async () => {
  for (const pod of pods.splice(0)) await pod.destroy();
});

/** The first event of this kind for this container, which the test needs to have happened. */
function found(timeline: Timeline, kind: TimelineEventKind, container: string): TimelineEvent {
  const event = timeline.find(kind, container);
  if (event === undefined) throw new Error(`no ${kind} event for container ${container} in the timeline`);
  return event;
}

const NODE = process.execPath;
/** A container that prints "up", then lives until signalled; on SIGTERM it exits after `termDelayMs` (Infinity: never). */
function program(termDelayMs: number): string[] {
  const onTerm = Number.isFinite(termDelayMs) ? `setTimeout(() => process.exit(0), ${termDelayMs})` : '0';
  return [NODE, '-e', `process.on('SIGTERM', () => { ${onTerm} }); console.log(JSON.stringify({ up: true })); setInterval(() => {}, 1e6);`];
}
/** A container serving HTTP on `port`: every request answered `status`, its User-Agent logged. */
function server(port: number, status: number): string[] {
  return [
    NODE,
    '-e',
    `require('http').createServer((q, s) => { console.log(JSON.stringify({ ua: q.headers['user-agent'], path: q.url })); s.writeHead(${status}).end(); }).listen(${port}, '127.0.0.1', () => console.log(JSON.stringify({ up: true }))); process.on('SIGTERM', () => process.exit(0));`,
  ];
}
/** An exec hook that takes `ms` milliseconds. */
function hook(ms: number): { exec: { command: string[] } } {
  return { exec: { command: [NODE, '-e', `setTimeout(() => {}, ${ms})`] } };
}

async function start(spec: PodSpec): Promise<Pod> {
  const pod = await Pod.start({
    ...spec,
    containers: spec.containers.map((c) => ({ ready: (container) => container.waitForLine((l) => l.up === true), ...c })),
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
    const slowStart = found(timeline, 'prestop-start', 'slow');
    const fastStart = found(timeline, 'prestop-start', 'fast');
    // Concurrent, not one after the other: each started before the other one ended.
    expect(slowStart.t).toBeLessThanOrEqual(found(timeline, 'prestop-end', 'fast').t);
    expect(fastStart.t).toBeLessThanOrEqual(found(timeline, 'prestop-end', 'slow').t);
    expect(found(timeline, 'sigterm', 'fast').t).toBeLessThan(found(timeline, 'prestop-end', 'slow').t);
    expect(found(timeline, 'sigterm', 'slow').t).toBeGreaterThanOrEqual(found(timeline, 'prestop-end', 'slow').t);
    expect(timeline.find('sigkill')).toBeUndefined();
    expect(timeline.events.at(-1)?.kind).toBe('pod-gone');
  });

  it('sends SIGTERM even when the hook fails, and records a FailedPreStopHook event', async () => {
    const pod = await start({
      terminationGracePeriodSeconds: 30,
      containers: [{ name: 'c', command: program(0), preStop: { exec: { command: [NODE, '-e', 'process.exit(3)'] } } }],
    });
    const timeline = await pod.terminate();
    expect(timeline.find('prestop-end', 'c')?.detail).toBe('exit 3');
    expect(timeline.find('event', 'c')?.detail).toBe(FAILED_PRESTOP_HOOK);
    expect(timeline.find('sigterm', 'c')).toBeDefined();
  });

  it('SIGKILLs a container that ignores SIGTERM once the grace period has passed, never under 2 s', async () => {
    const pod = await start({ terminationGracePeriodSeconds: 1, containers: [{ name: 'stubborn', command: program(Infinity) }] });
    const timeline = await pod.terminate();
    expect(found(timeline, 'sigkill', 'stubborn').t).toBeGreaterThanOrEqual(found(timeline, 'sigterm', 'stubborn').t + 2_000);
    expect(timeline.find('container-exit', 'stubborn')?.detail).toBe('killed by SIGKILL');
  });

  it('stops waiting for a hook at the grace period: SIGTERM then, SIGKILL 2 s later, the hook dies with its container', async () => {
    const pod = await start({ terminationGracePeriodSeconds: 1, containers: [{ name: 'c', command: program(Infinity), preStop: hook(60_000) }] });
    const timeline = await pod.terminate();
    const sigterm = found(timeline, 'sigterm', 'c');
    expect(found(timeline, 'prestop-timeout', 'c').t).toBeGreaterThanOrEqual(1_000);
    expect(sigterm.t).toBeGreaterThanOrEqual(1_000);
    expect(found(timeline, 'sigkill', 'c').t).toBeGreaterThanOrEqual(sigterm.t + 2_000);
    expect(timeline.find('prestop-end', 'c')?.detail).toBe('killed with its container');
    expect(timeline.find('event', 'c')?.detail).toBe(FAILED_PRESTOP_HOOK);
  });

  it('gives each container what its own hook left of the grace period, in whole seconds, at least 2 s', async () => {
    const pod = await start({ terminationGracePeriodSeconds: 4, containers: [{ name: 'c', command: program(Infinity), preStop: hook(1_200) }] });
    const timeline = await pod.terminate();
    const hookMs = found(timeline, 'prestop-end', 'c').t - found(timeline, 'prestop-start', 'c').t;
    const leftMs = Math.max(4 - Math.trunc(hookMs / 1_000), 2) * 1_000;
    const sigterm = found(timeline, 'sigterm', 'c');
    expect(sigterm.t).toBeGreaterThanOrEqual(found(timeline, 'prestop-end', 'c').t);
    expect(found(timeline, 'sigkill', 'c').t).toBeGreaterThanOrEqual(sigterm.t + leftMs);
  });

  it('ends an httpGet hook well on any status, and fails it only on a broken connection', async () => {
    const port = await freePort();
    const pod = await start({
      terminationGracePeriodSeconds: 30,
      containers: [
        { name: 'answers-500', command: server(port, 500), preStop: { httpGet: { port, path: '/x' } } },
        { name: 'refused', command: program(0), preStop: { httpGet: { port: 1, path: '/x' } } },
      ],
    });
    const timeline = await pod.terminate();
    expect(timeline.find('prestop-end', 'answers-500')?.detail).toBe('HTTP 500');
    expect(timeline.find('event', 'answers-500')).toBeUndefined();
    expect(timeline.find('prestop-end', 'refused')?.detail).toBe('error ECONNREFUSED');
    expect(timeline.find('event', 'refused')?.detail).toBe(FAILED_PRESTOP_HOOK);
    expect(timeline.find('sigterm', 'refused')).toBeDefined();
    expect(pod.container('answers-500').lines).toContainEqual({ ua: 'kube-lifecycle/1.33', path: '/x' });
  });

  it("fails a hostNetwork pod's httpGet hook without a host at once, never dialing, yet its probe passes", async () => {
    const port = await freePort();
    const pod = await start({
      name: 'envoy-abc',
      hostNetwork: true,
      terminationGracePeriodSeconds: 30,
      containers: [
        { name: 'c', command: server(port, 200), probe: { port, path: '/ready', timeoutSeconds: 1 }, preStop: { httpGet: { port, path: '/hook' } } },
      ],
    });
    // The probe dialed the pod's status IP, which a host-network pod has (the node's): the server logs it.
    await pod.container('c').waitForLine((line) => line.ua === 'kube-probe/1.33' && line.path === '/ready');
    const timeline = await pod.terminate();
    expect(timeline.find('prestop-end', 'c')?.detail).toMatch(/^error failed to find networking container: &\{envoy-abc \[\]/);
    expect(timeline.find('event', 'c')?.detail).toBe(FAILED_PRESTOP_HOOK);
    expect(found(timeline, 'sigterm', 'c').t).toBeGreaterThanOrEqual(found(timeline, 'prestop-end', 'c').t);
    expect(pod.container('c').lines.some((line) => line.path === '/hook')).toBe(false);
  });

  it("dials a hook's host from the node's network namespace: a hostNetwork pod's loopback", async () => {
    const port = await freePort();
    const pod = await start({
      hostNetwork: true,
      terminationGracePeriodSeconds: 30,
      containers: [{ name: 'c', command: server(port, 200), preStop: { httpGet: { host: '127.0.0.1', port, path: '/hook' } } }],
    });
    const timeline = await pod.terminate();
    expect(timeline.find('prestop-end', 'c')?.detail).toBe('HTTP 200');
    expect(timeline.find('event')).toBeUndefined();
    expect(pod.container('c').lines).toContainEqual({ ua: 'kube-lifecycle/1.33', path: '/hook' });
  });

  it('refuses to play a loopback hook host on a pod-network pod (kubelet would dial the node, here the same address)', async () => {
    const port = await freePort();
    const pod = await start({
      terminationGracePeriodSeconds: 30,
      containers: [{ name: 'c', command: server(port, 200), preStop: { httpGet: { host: '127.0.0.1', port, path: '/hook' } } }],
    });
    await expect(pod.terminate()).rejects.toThrow(/dials the node, not the pod/);
  });

  it("runs native sidecars' hooks at once with the others, and stops sidecars only after every regular container, in reverse order", async () => {
    const pod = await start({
      terminationGracePeriodSeconds: 30,
      initContainers: [
        { name: 'sidecar-a', command: program(0), ready: (c) => c.waitForLine((l) => l.up === true) },
        { name: 'sidecar-b', command: program(0), ready: (c) => c.waitForLine((l) => l.up === true), preStop: hook(50) },
      ],
      containers: [{ name: 'main', command: program(300), preStop: hook(200) }],
    });
    const timeline = await pod.terminate();
    const mainExit = found(timeline, 'container-exit', 'main');
    // killContainer runs the hook before waiting its turn: both hooks run side by side.
    expect(found(timeline, 'prestop-start', 'sidecar-b').t).toBeLessThanOrEqual(found(timeline, 'prestop-end', 'main').t);
    expect(found(timeline, 'sigterm', 'sidecar-b').t).toBeGreaterThanOrEqual(mainExit.t);
    expect(found(timeline, 'sigterm', 'sidecar-a').t).toBeGreaterThanOrEqual(found(timeline, 'container-exit', 'sidecar-b').t);
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
    expect(pod.timeline.events.map((e) => `${e.kind} ${e.container}`)).toEqual([
      'prestop-start probed',
      'prestop-end probed',
      'sigterm probed',
      'container-restart probed',
    ]);
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
              command: [
                NODE,
                '-e',
                `require('fs').appendFileSync(process.env.ENVOY_SHUTDOWN_HOOK_LOG_PATH, JSON.stringify({ hook: process.env.ROLE, k8s: process.env.KUBERNETES_SERVICE_HOST }) + '\\n')`,
              ],
            },
          },
        },
      ],
    });
    await pod.terminate();
    expect(pod.container('c').logs()).toEqual([{ up: true }, { hook: 'sidecar', k8s: '10.96.0.1' }]);
  });
});
