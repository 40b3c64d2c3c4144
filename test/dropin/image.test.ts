// The image runs Envoy Gateway's and Contour's generated shutdown-manager containers unchanged:
// the container's command and args as rendered (envoy-gateway from PATH, /bin/contour), the
// peer's user, capabilities and volumes; kubelet's probes and Envoy's httpGet preStop reach the
// manager on the peer's fixed port; the exec preStop (`podman exec`, as kubelet runs it) drains the
// real Envoy beside it; SIGTERM ends the manager with 0.
import { afterEach, describe, expect, it } from 'vitest';
import { PodmanObjects, podman, podmanRun, testImages } from '../support/podman/podman.js';
import { logs, mainProcessIds, waitFor } from '../support/podman/wait.js';
import { inPod, startContourPod, startEgPod } from './peer-pod.js';

const images = testImages();
const objects = new PodmanObjects();
afterEach(() => objects.removeAll());

describe("the image runs the peers' generated shutdown-manager containers", () => {
  it('Envoy Gateway: envoy-gateway envoy shutdown-manager --ready-timeout=40s; preStop envoy-gateway envoy shutdown --drain-timeout=30s --min-drain-duration=2s', async () => {
    const pod = await startEgPod(objects, images, ['envoy', 'shutdown-manager', '--ready-timeout=40s']);
    // The startup probe: httpGet /healthz :19002, on IPv4 and IPv6.
    const probe = await inPod(pod.pid, { gets: [{ port: 19002, path: '/healthz' }], untilUp: true });
    expect(probe.answers[0]).toMatchObject({ status: 200, body: '' });
    await inPod(pod.pid, { gets: [{ port: 10080, path: '/' }], untilUp: true });
    expect(await mainProcessIds(pod.manager)).toEqual({ uid: 65532, gid: 65532, capEff: '0000000000000000' });

    // Both preStop hooks: Envoy's httpGet /shutdown/ready, held once the manager logged it, then the
    // manager's exec, so the answer's time counts from before the drain began.
    const envoyHook = inPod(pod.pid, { idle: [10080], closeAfterMs: 15_000, gets: [{ port: 19002, path: '/shutdown/ready' }] });
    await waitFor("Envoy's preStop request held by the manager", async () =>
      /waiting for the drain to finish/.test(await logs(pod.manager)) ? true : undefined,
    );
    const execHook = podmanRun(['exec', pod.manager, 'envoy-gateway', 'envoy', 'shutdown', '--drain-timeout=30s', '--min-drain-duration=2s'], 60_000);
    const [held, exec] = await Promise.all([envoyHook, execHook]);
    expect(exec.code).toBe(0);
    const answer = held.answers[0] as { status: number; body: string; atMs: number };
    expect(answer).toMatchObject({ status: 200, body: '' });
    // Released after the 2 s minimum and the 2 s quiet period though the idle connection is still open, not at the 30 s timeout.
    expect(answer.atMs).toBeGreaterThanOrEqual(2_000);
    expect(held.closedAtMs).toBeUndefined(); // the client had not closed it yet

    // The hook's lines reach the container log (PID 1's stdout), as under Envoy Gateway.
    expect(await logs(pod.manager)).toMatch(/"peer":"envoy-gateway".*"msg":"shutdown finished"/);
    await podman(['stop', '--time', '10', pod.manager], 30_000);
    expect((await podman(['inspect', '--format', '{{.State.ExitCode}}', pod.manager])).trim()).toBe('0');
  });

  it('Contour: /bin/contour envoy shutdown-manager; preStop /bin/contour envoy shutdown; admin socket and /admin/ok on the shared volume, as 65534', async () => {
    const pod = await startContourPod(objects, images, ['envoy', 'shutdown-manager']);
    await inPod(pod.pid, {
      gets: [
        { port: 8090, path: '/healthz' },
        { port: 8080, path: '/' },
      ],
      untilUp: true,
    });
    expect(await mainProcessIds(pod.manager)).toMatchObject({ uid: 65534, gid: 65534 });

    const envoyHook = inPod(pod.pid, { idle: [8080], closeAfterMs: 1_500, gets: [{ port: 8090, path: '/shutdown' }] });
    const execHook = podmanRun(['exec', pod.manager, '/bin/contour', 'envoy', 'shutdown'], 60_000);
    const [held, exec] = await Promise.all([envoyHook, execHook]);
    expect(exec.code).toBe(0);
    const answer = held.answers[0] as { status: number; body: string; atMs: number };
    expect(answer).toMatchObject({ status: 200, body: 'OK' });
    expect(answer.atMs).toBeGreaterThanOrEqual(held.closedAtMs ?? Number.NaN);
    expect(await logs(pod.manager)).toMatch(/INFO +shutdown: shutdown finished peer=contour/);
    await podman(['stop', '--time', '10', pod.manager], 30_000);
    expect((await podman(['inspect', '--format', '{{.State.ExitCode}}', pod.manager])).trim()).toBe('0');
  });

  it("anything else of the peers' command lines exits 2 with one line naming the project; /tmp is writable by 65532 and 65534", async () => {
    for (const [entrypoint, args] of [
      ['envoy-gateway', ['server']],
      ['/bin/contour', ['serve']],
    ] as const) {
      const result = await podmanRun([
        'run',
        '--rm',
        ...objects.labelArgs,
        '--network',
        'none',
        '--entrypoint',
        JSON.stringify([entrypoint]),
        images.manager,
        ...args,
      ]);
      expect(result.code).toBe(2);
      expect(result.stderr.trim().split('\n')).toHaveLength(1);
      expect(result.stderr).toMatch(/only provides|provides only/);
      expect(result.stderr).toContain('envoy-shutdown-manager');
    }
    // No Envoy in an empty network: the hook gives up, writes /tmp/shutdown-ready and exits 0 as Envoy Gateway's does; 1 if /tmp were not writable.
    for (const user of ['65532:65532', '65534:65534']) {
      const result = await podmanRun(
        [
          'run',
          '--rm',
          ...objects.labelArgs,
          '--network',
          'none',
          '--user',
          user,
          '--entrypoint',
          '["envoy-gateway"]',
          images.manager,
          'envoy',
          'shutdown',
          '--drain-timeout=5s',
          '--min-drain-duration=0s',
        ],
        60_000,
      );
      expect({ user, code: result.code, stderr: result.stderr }).toEqual({ user, code: 0, stderr: '' });
      expect(result.stdout).toMatch(/"msg":"shutdown finished"/);
    }
  });
});
