// The image as users meet it, run by podman the way kubelet runs the chart's containers: as
// 65532, read-only root filesystem without podman's extra /tmp tmpfs (readOnlyRootFilesystem has
// none), no capabilities, host network on loopback; the exec hook through `podman exec`, its lines
// read back from `podman logs` as `kubectl logs` would show them.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PortMap } from '../support/chart/chart-pod.js';
import { renderChart } from '../support/chart/helm.js';
import { readPod } from '../support/chart/manifests.js';
import { PodmanObjects, podman, podmanRun, testImages } from '../support/podman/podman.js';
import { imageScripts } from '../support/podman/scripts.js';
import { jsonLines, mainProcessIds, waitFor, waitForHttp } from '../support/podman/wait.js';
import { request } from '../support/protocols/clients.js';
import { type RealEnvoy, startRealEnvoy } from '../support/real-envoy/process.js';
import { expectedFiles, imageFiles } from './support/image-files.js';

const { manager: IMAGE, managerTag } = testImages();
const { rootfs } = await imageScripts();
const VERSION = (JSON.parse(readFileSync('package.json', 'utf8')) as { version: string }).version;
/** What kubelet's securityContext (and the chart's) makes of the container. */
const RESTRICTED = ['--network', 'host', '--read-only', '--read-only-tmpfs=false', '--cap-drop', 'ALL', '--security-opt', 'no-new-privileges'];

const objects = new PodmanObjects();
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await objects.removeAll();
});

describe('the image', () => {
  it('holds the executable (also linked as envoy-gateway and /bin/contour), its loader and libraries, passwd and group, /tmp and nothing else: no shell', async () => {
    const { files, listing } = await imageFiles(objects, IMAGE);
    expect(files).toEqual(
      expectedFiles(rootfs, 'lib/x86_64-linux-gnu', 'ld-linux-x86-64.so.2', 'lib64/ld-linux-x86-64.so.2 -> ../lib/x86_64-linux-gnu/ld-linux-x86-64.so.2'),
    );
    expect(listing).toMatch(/^drwxrwxrwt .* tmp\/$/m);
    const shell = await podmanRun(['run', '--rm', ...objects.labelArgs, '--network', 'host', '--entrypoint', '/bin/sh', IMAGE, '-c', 'true']);
    expect(shell.code).not.toBe(0);
    expect(shell.stderr).toMatch(/\/bin\/sh.*no such file or directory/);
  });

  it(`is ${managerTag} and runs --version as 65532:65532, read-only, with no capabilities`, async () => {
    expect(managerTag).toBe(`localhost/envoy-shutdown-manager:${VERSION}`);
    const config = JSON.parse(await podman(['image', 'inspect', '--format', '{{json .Config}}', IMAGE])) as {
      User: string;
      Entrypoint: string[];
      Cmd: string[];
    };
    expect(config).toMatchObject({ User: '65532:65532', Entrypoint: [rootfs.IMAGE_EXECUTABLE], Cmd: ['shutdown-manager'] });
    const name = objects.container('version');
    const result = await podmanRun(['run', '--name', name, ...objects.labelArgs, ...RESTRICTED, IMAGE, '--version']);
    expect({ code: result.code, stdout: result.stdout.trim(), stderr: result.stderr }).toEqual({ code: 0, stdout: VERSION, stderr: '' });
  });

  it('refuses to serve with its ready file on the read-only root filesystem (exit 2), as under readOnlyRootFilesystem', async () => {
    const name = objects.container('rofs');
    const result = await podmanRun([
      'run',
      '--name',
      name,
      ...objects.labelArgs,
      ...RESTRICTED,
      IMAGE,
      'shutdown-manager',
      '--host',
      '127.0.0.1',
      '--port',
      String((await PortMap.reserve([1])).port(1)),
    ]);
    expect(result.code).toBe(2);
    expect(`${result.stdout}${result.stderr}`).toContain('EROFS');
  });

  it('serves /healthz, holds /shutdown/ready until the exec hook drains real Envoy and writes the ready file on the volume; the hook logs to podman logs', async () => {
    const envoy = await realEnvoy();
    const port = (await PortMap.reserve([19002])).port(19002);
    const volume = await objects.volume('shutdown');
    const name = objects.container('manager');
    await podman([
      'run',
      '--detach',
      '--name',
      name,
      ...objects.labelArgs,
      ...RESTRICTED,
      '--volume',
      `${volume}:/shutdown`,
      '--env',
      'ENVOY_SHUTDOWN_READY_FILE=/shutdown/ready',
      '--env',
      `ENVOY_SHUTDOWN_ADMIN_ADDRESS=${envoy.adminAddress}`,
      '--env',
      'ENVOY_SHUTDOWN_MIN_DRAIN_DURATION=1s',
      '--env',
      'ENVOY_SHUTDOWN_CHECK_INTERVAL=100ms',
      // kubelet sets it in every pod; the hook copies its lines to PID 1's stdout only inside a cluster.
      '--env',
      'KUBERNETES_SERVICE_HOST=127.0.0.1',
      IMAGE,
      'shutdown-manager',
      '--host',
      '127.0.0.1',
      '--port',
      String(port),
    ]);
    await waitForHttp(name, port, '/healthz');
    expect(await mainProcessIds(name)).toEqual({ uid: 65532, gid: 65532, capEff: '0000000000000000' });

    const held = request({ port }, '/shutdown/ready');
    const hook = podmanRun(['exec', name, 'envoy-shutdown-manager', 'shutdown'], 30_000);
    const [answer, exec] = await Promise.all([held, hook]);
    expect(exec.code).toBe(0);
    expect(answer.status).toBe(200);
    const mountpoint = (await podman(['volume', 'inspect', '--format', '{{.Mountpoint}}', volume])).trim();
    expect(existsSync(join(mountpoint, 'ready'))).toBe(true);

    // The hook is a separate process: its lines reach the container log through PID 1's stdout.
    const lines = await waitFor("the hook's last line in podman logs", async () => {
      const found = await jsonLines(name);
      return found.some((line) => line.msg === 'shutdown finished') ? found : undefined;
    });
    const messages = lines.map((line) => String(line.msg));
    expect(messages).toEqual(expect.arrayContaining(['shutdown manager listening', 'shutdown started', 'graceful drain started', 'shutdown finished']));
    expect(messages.indexOf('shutdown started')).toBeGreaterThan(messages.indexOf('shutdown manager listening'));
  });
});

async function realEnvoy(): Promise<RealEnvoy> {
  const rendered = readPod(await renderChart());
  const envoy = await startRealEnvoy({ bootstrap: rendered.bootstrap });
  cleanups.push(() => envoy.stop());
  return envoy;
}
