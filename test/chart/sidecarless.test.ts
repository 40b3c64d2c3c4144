// The chart's sidecar-less mode (mode: sidecarless), render by render: nothing beside Envoy (no
// sidecar, no hook token, no ready file), the install init container, the executable's volume
// mounted read-only in Envoy's container, and Envoy's exec hook, whose paths are those the real
// `install` lays out and whose environment the real executable reads; the image-volume command
// run from a root laid out like the image; the contradictions the validation refuses.
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, linkSync, mkdirSync, readdirSync, statSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENV } from '../../src/cli/config.js';
import { shutdownConfigFromEnv } from '../../src/drain/drain-config.js';
import { LOG_FORMATS, LOG_LEVELS } from '../../src/shared/log.js';
import { addressFlag } from '../support/chart/bootstrap.js';
import { SIDECARLESS_CASES } from '../support/chart/cases.js';
import { remapArgs } from '../support/chart/chart-pod.js';
import { helmTemplate, renderChart } from '../support/chart/helm.js';
import {
  ENVOY_CONTAINER,
  INSTALL_CONTAINER,
  mountHolding,
  type RenderedSidecarlessPod,
  readSidecarlessPod,
  releaseObjects,
  SIDECAR_CONTAINER,
  validateAgainstKubernetes,
} from '../support/chart/manifests.js';
import { expectProblems } from '../support/chart/validation.js';
import { tempDir } from '../support/cli.js';
import { SINGLE_EXECUTABLE } from '../support/envoy-pod.js';

const IMAGE = 'envoy-shutdown-manager:0.1.0';
const MOUNT = '/esm';
const RESTRICTED = {
  allowPrivilegeEscalation: false,
  readOnlyRootFilesystem: true,
  runAsNonRoot: true,
  runAsUser: 65532,
  runAsGroup: 65532,
  capabilities: { drop: ['ALL'] },
  seccompProfile: { type: 'RuntimeDefault' },
};
/** The hook's command for each source: the loader, its library path, the executable, the drain. */
const COPY_HOOK = [
  '/esm/current/lib/ld-linux-x86-64.so.2',
  '--library-path',
  '/esm/current/lib',
  '/esm/current/envoy-shutdown-manager',
  'shutdown',
  '--no-ready-file',
];
const IMAGE_VOLUME_HOOK = [
  '/esm/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2',
  '--library-path',
  '/esm/lib/x86_64-linux-gnu:/esm/usr/lib/x86_64-linux-gnu',
  '/esm/usr/local/bin/envoy-shutdown-manager',
  'shutdown',
  '--no-ready-file',
];
/** The drain's settings in Envoy's container: `shutdown` reads each one; nothing of the manager's. */
const HOOK_VARIABLES = [
  ENV.adminAddress,
  ENV.drainTimeout,
  ENV.minDrainDuration,
  ENV.quietPeriod,
  ENV.ignoreIdleConnections,
  ENV.exitAtConnections,
  ENV.checkInterval,
  ENV.healthCheckFailureDelay,
  ENV.adminTimeout,
  ENV.connections,
  ENV.ignoreListener,
  ENV.logLevel,
  ENV.logFormat,
];

const cleanups: Array<() => void> = [];
afterAll(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

function dir(prefix: string): string {
  const made = tempDir(prefix);
  cleanups.push(made.cleanup);
  return made.path;
}

/** Every absolute path a command names, colon-separated lists included. */
const pathsIn = (command: readonly string[]): string[] => command.flatMap((arg) => arg.split(':')).filter((part) => part.startsWith('/'));

describe.each(SIDECARLESS_CASES)('helm template with $name', (chartCase) => {
  let rendered: RenderedSidecarlessPod;
  beforeAll(async () => {
    rendered = readSidecarlessPod(await renderChart(chartCase));
  });

  it('renders valid objects with nothing beside Envoy: no sidecar, no hook token, no ready file', () => {
    const { objects, podSpec, deployment } = rendered;
    expect(() => validateAgainstKubernetes(objects)).not.toThrow();
    expect(podSpec.containers.map((c) => c.name)).toEqual([ENVOY_CONTAINER]);
    expect((podSpec.initContainers ?? []).map((c) => c.name)).toEqual(chartCase.imageVolume === true ? [] : [INSTALL_CONTAINER]);
    for (const c of [...podSpec.containers, ...(podSpec.initContainers ?? [])]) {
      expect(c.name).not.toBe(SIDECAR_CONTAINER);
      expect(c.restartPolicy).toBeUndefined(); // no native sidecar either
    }
    expect(
      releaseObjects(objects)
        .map((o) => o.kind)
        .sort(),
    ).toEqual(['ConfigMap', 'Deployment', 'Service']);
    const spec = JSON.stringify(deployment);
    for (const absent of [
      'X-Envoy-Shutdown-Token',
      'secretKeyRef',
      'hook-token',
      'httpGet":{"path":"/shutdown',
      '--require-envoy-prestop',
      ENV.readyFile,
      ENV.hookToken,
      ENV.port,
    ]) {
      expect(spec, absent).not.toContain(absent);
    }
    // The volumes: the bootstrap, Envoy's /tmp, the executable's, the admin socket's (hostNetwork); no ready-file volume.
    const expected = ['bootstrap', 'envoy-tmp', rendered.executableVolume.name, ...(chartCase.values?.hostNetwork === true ? ['envoy-admin'] : [])];
    expect(podSpec.volumes?.map((v) => v.name).sort()).toEqual(expected.sort());
  });

  it("makes Envoy's preStop an exec of the executable on the read-only volume, with --no-ready-file and no other flag", () => {
    const { hookCommand, envoy, executableMount, executableVolume } = rendered;
    expect(hookCommand).toEqual(chartCase.imageVolume === true ? IMAGE_VOLUME_HOOK : COPY_HOOK);
    expect(envoy.lifecycle?.preStop?.httpGet).toBeUndefined();
    for (const path of pathsIn(hookCommand)) expect(mountHolding(envoy, path)?.name, path).toBe(executableVolume.name);
    expect(executableMount).toEqual({ name: executableVolume.name, mountPath: MOUNT, readOnly: true });
    // The hook runs as Envoy, in Envoy's restricted container: its logs reach PID 1's stdout, Envoy's.
    expect(envoy.securityContext).toEqual(RESTRICTED);
    expect(envoy.command).toEqual(['/usr/local/bin/envoy']);
  });

  it(
    chartCase.imageVolume === true
      ? 'mounts the project image itself as an image volume, without an init container'
      : 'fills an emptyDir with a sizeLimit from a restricted init container that runs install',
    () => {
      const { install, executableVolume } = rendered;
      if (chartCase.imageVolume === true) {
        expect(executableVolume).toEqual({ name: executableVolume.name, image: { reference: IMAGE, pullPolicy: 'IfNotPresent' } });
        expect(install).toBeUndefined();
        return;
      }
      expect(executableVolume).toEqual({ name: executableVolume.name, emptyDir: { sizeLimit: chartCase.sizeLimit } });
      expect(install?.image).toBe(IMAGE);
      expect(install?.command).toBeUndefined(); // the image's entrypoint, envoy-shutdown-manager
      expect(install?.args).toEqual(['install', MOUNT]);
      expect(install?.volumeMounts).toEqual([{ name: executableVolume.name, mountPath: MOUNT }]);
      expect(install?.securityContext).toEqual(RESTRICTED);
      expect(install?.resources).toEqual({ requests: { cpu: '10m', memory: '64Mi' }, limits: { memory: '192Mi' } });
      // A classic init container: it runs to completion before Envoy starts.
      for (const field of ['lifecycle', 'startupProbe', 'readinessProbe', 'livenessProbe', 'ports', 'restartPolicy'] as const)
        expect(install?.[field], field).toBeUndefined();
    },
  );

  it(`gives Envoy's container the drain's settings, as the project's own parser reads them: drain ${chartCase.timeouts.drain} s < grace ${chartCase.timeouts.grace} s`, () => {
    const { envoyEnv, envoy, podSpec, bootstrap } = rendered;
    const extra = ((chartCase.values?.envoy as { extraEnv?: Array<{ name: string }> } | undefined)?.extraEnv ?? []).map((e) => e.name);
    expect(Object.keys(envoyEnv).sort()).toEqual([...HOOK_VARIABLES, ...extra].sort());
    const config = shutdownConfigFromEnv(envoyEnv, '');
    expect(config.readyFile).toBeUndefined();
    expect(config.requireEnvoyPrestop).toBe(false);
    expect(config.drainTimeout).toBe(chartCase.timeouts.drain * 1_000);
    expect(config.connections).toBe('listeners');
    expect([...config.ignoreListener].sort()).toEqual(['ready', 'stats']);
    expect(envoyEnv[ENV.adminAddress]).toBe(addressFlag(bootstrap.admin?.address));
    expect(LOG_LEVELS).toContain(envoyEnv[ENV.logLevel]);
    expect(LOG_FORMATS).toContain(envoyEnv[ENV.logFormat]);
    expect(podSpec.terminationGracePeriodSeconds).toBe(chartCase.timeouts.grace);
    expect(config.drainTimeout).toBeLessThan(chartCase.timeouts.grace * 1_000);
    const args = envoy.args ?? [];
    expect(Number(args[args.indexOf('--drain-time-s') + 1])).toBe(chartCase.timeouts.drain);
  });
});

describe('the hook command, against what the real `install` lays out', () => {
  let copy: RenderedSidecarlessPod;
  let imageVolume: RenderedSidecarlessPod;
  let installDir: string;
  let printed: string[];
  beforeAll(async () => {
    copy = readSidecarlessPod(await renderChart({ set: ['mode=sidecarless'] }));
    imageVolume = readSidecarlessPod(await renderChart({ set: ['mode=sidecarless', 'sidecarless.source=imageVolume'], kubeVersion: '1.33.0' }));
    installDir = dir('sidecarless-install-');
    const result = spawnSync(SINGLE_EXECUTABLE, ['install', installDir, '--mount-path', copy.executableMount.mountPath], { encoding: 'utf8', env: {} });
    if (result.status !== 0) throw new Error(`install failed (${result.status}): ${result.stderr}`);
    printed = JSON.parse(result.stdout.trim().split('\n').at(-1) ?? '') as string[];
  });

  const onInstallDir = (command: readonly string[]): string[] =>
    remapArgs(command, { port: (port) => port, path: (path) => installDir + path.slice(copy.executableMount.mountPath.length) });

  it('is the command install prints for the mount path, then --no-ready-file; every path it names is in the copy', () => {
    expect(printed.at(-1)).toBe('shutdown');
    const prefix = printed.slice(0, -1);
    expect(copy.hookCommand.slice(0, prefix.length)).toEqual(prefix);
    expect(copy.hookCommand.slice(prefix.length)).toEqual(['shutdown', '--no-ready-file']);
    for (const path of pathsIn(onInstallDir(prefix))) expect(existsSync(path), path).toBe(true);
    const [loader, , , executable] = onInstallDir(prefix);
    for (const file of [loader, executable]) expect(statSync(file ?? '').mode & 0o755, file).toBe(0o755); // runnable by Envoy's UID, whatever it is
  });

  it("runs the copy through the rendered command with Envoy's rendered environment: every setting comes from that environment", () => {
    const [file, ...args] = onInstallDir(copy.hookCommand);
    const result = spawnSync(file ?? '', [...args, '--dry-run', '--output', 'json'], { encoding: 'utf8', env: { ...copy.envoyEnv } });
    expect(result.stderr).toBe('');
    expect([0, 1]).toContain(result.status); // 1: no Envoy listens at the rendered admin address
    const options = (JSON.parse(result.stdout) as { options: Record<string, { value: unknown; source: string }> }).options;
    const fromEnv = Object.fromEntries(
      Object.entries(options)
        .filter(([, option]) => option.source.startsWith('env '))
        .map(([name, option]) => [name, option.source.slice('env '.length)]),
    );
    expect(fromEnv).toEqual({
      adminAddress: ENV.adminAddress,
      drainTimeout: ENV.drainTimeout,
      minDrainDuration: ENV.minDrainDuration,
      exitAtConnections: ENV.exitAtConnections,
      checkInterval: ENV.checkInterval,
      healthCheckFailureDelay: ENV.healthCheckFailureDelay,
      quietPeriod: ENV.quietPeriod,
      ignoreIdleConnections: ENV.ignoreIdleConnections,
      connections: ENV.connections,
      ignoreListener: ENV.ignoreListener,
      adminTimeout: ENV.adminTimeout,
    });
    expect(options.readyFile).toEqual({ value: 'none', source: 'flag' });
    expect(options.requireEnvoyPrestop?.value).toBe('false');
    expect(options.drainTimeout?.value).toBe('1m0s');
    expect(options.quietPeriod?.value).toBe('5s');
  });

  it("runs the image-volume command as Envoy's UID from a root that holds only the image's layout under the mount", () => {
    // distroless cc-debian12: libc's files and libgcc_s in /lib/x86_64-linux-gnu, libstdc++ in
    // /usr/lib/x86_64-linux-gnu, /lib64's loader an absolute symlink, the executable in /usr/local/bin.
    const root = dir('image-root-');
    chmodSync(root, 0o755);
    const image = join(root, MOUNT);
    const place = (from: string, to: string): void => {
      mkdirSync(join(to, '..'), { recursive: true, mode: 0o755 });
      try {
        linkSync(from, to);
      } catch {
        copyFileSync(from, to);
        chmodSync(to, statSync(from).mode);
      }
    };
    const lib = join(installDir, 'current', 'lib');
    for (const name of readdirSync(lib))
      place(join(lib, name), join(image, name.startsWith('libstdc++') ? 'usr/lib/x86_64-linux-gnu' : 'lib/x86_64-linux-gnu', name));
    place(join(installDir, 'current', 'envoy-shutdown-manager'), join(image, 'usr/local/bin/envoy-shutdown-manager'));
    mkdirSync(join(image, 'lib64'), { mode: 0o755 });
    symlinkSync('/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2', join(image, 'lib64', 'ld-linux-x86-64.so.2'));
    expect(readdirSync(root)).toEqual([MOUNT.slice(1)]); // nothing else: no /lib to fall back on, no shell, no /proc

    const user = `--userspec=${imageVolume.envoy.securityContext?.runAsUser}:${imageVolume.envoy.securityContext?.runAsGroup}`;
    const run = (command: readonly string[]): ReturnType<typeof spawnSync> & { stdout: string } =>
      spawnSync('/usr/sbin/chroot', [user, root, ...command, '--version'], { encoding: 'utf8', env: {} });
    const prefix = imageVolume.hookCommand.slice(0, 4);
    const result = run(prefix);
    expect(result.stderr).toBe('');
    expect(result.stdout.trim()).toBe('0.1.0');
    // The same root refuses what the chart avoids: the loader named through /lib64, or half the library path.
    expect(run(['/esm/lib64/ld-linux-x86-64.so.2', ...prefix.slice(1)]).status).not.toBe(0);
    expect(run([prefix[0] ?? '', '--library-path', '/esm/lib/x86_64-linux-gnu', prefix[3] ?? '']).status).not.toBe(0);
  });
});

describe('sidecar-less values validation', () => {
  it('fails the render once, listing every contradiction of mode sidecarless', async () => {
    const result = await helmTemplate({
      kubeVersion: '1.32.9',
      values: {
        mode: 'sidecarless',
        nativeSidecar: true,
        sidecarless: { source: 'imageVolume' },
        shutdown: { drainTimeout: 60, terminationGracePeriodSeconds: 60 },
        shutdownManager: { extraEnv: [{ name: 'FOO', value: 'bar' }] },
        envoy: {
          extraEnv: [
            { name: 'ENVOY_SHUTDOWN_QUIET_PERIOD', value: '1s' },
            { name: 'ENVOY_SHUTDOWN_REQUIRE_ENVOY_PRESTOP', value: 'true' },
          ],
        },
      },
    });
    const expected = [
      'shutdown.terminationGracePeriodSeconds (60 s) must be longer than shutdown.drainTimeout (60 s): with mode sidecarless',
      'envoy.extraEnv[0]: ENVOY_SHUTDOWN_QUIET_PERIOD is set by the chart from its values',
      'envoy.extraEnv[1]: ENVOY_SHUTDOWN_REQUIRE_ENVOY_PRESTOP has no place in mode sidecarless',
      'nativeSidecar: true asks for the manager as a native sidecar, and mode sidecarless for no manager at all',
      'shutdownManager.extraEnv: mode sidecarless has no shutdown-manager container',
      'sidecarless.source imageVolume needs Kubernetes 1.33 or later (image volumes, beta; the ImageVolume feature gate is on by default from 1.35), and this render targets v1.32.9',
    ];
    expectProblems(result, expected);
  });

  it('refuses an emptyDir too small for the copy, and an admin socket on the read-only mount', async () => {
    const result = await helmTemplate({
      set: ['mode=sidecarless', 'sidecarless.sizeLimit=127Mi', 'admin.unixSocket.enabled=true', 'admin.unixSocket.path=/esm/admin/admin.sock'],
    });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('(2 problems)');
    expect(result.stderr).toContain('sidecarless.sizeLimit (127Mi) must be at least 128Mi: the copy is about 111 MB');
    expect(result.stderr).toContain('admin.unixSocket.path must not be under /esm, where mode sidecarless mounts the executable read-only');
    for (const size of ['128Mi', '1Gi']) expect((await helmTemplate({ set: ['mode=sidecarless', `sidecarless.sizeLimit=${size}`] })).code, size).toBe(0);
  });

  it("leaves out the sidecar's checks: its port, the ready timeout and an existing Secret's token are not used", async () => {
    const values = {
      shutdown: { readyTimeout: 50 },
      shutdownManager: { port: 8080 },
      hookToken: { existingSecret: 'edge-token' },
    };
    const sidecar = await helmTemplate({ values });
    expect(sidecar.code).not.toBe(0);
    const problems = [
      'shutdown.readyTimeout (50 s) must be longer than shutdown.drainTimeout (60 s)',
      'listeners[0] (ingress): port 8080 is already used by shutdownManager.port',
      'envoy.ports[0] (http): port 8080 is already used by shutdownManager.port',
      'hookToken.existingSecret: Secret proxies/edge-token cannot be read',
    ];
    expect(sidecar.stderr).toContain(`(${problems.length} problems)`);
    for (const line of problems) {
      expect(sidecar.stderr).toContain(line);
    }
    const rendered = readSidecarlessPod(await renderChart({ values: { ...values, mode: 'sidecarless' } }));
    expect(rendered.podSpec.terminationGracePeriodSeconds).toBe(90); // drain + 30, whatever readyTimeout says
    expect(JSON.stringify(rendered.objects)).not.toContain('edge-token');
  });

  it('accepts image volumes from Kubernetes 1.33 on', async () => {
    const set = ['mode=sidecarless', 'sidecarless.source=imageVolume'];
    expect((await helmTemplate({ set, kubeVersion: '1.33.0' })).code).toBe(0);
    const old = await helmTemplate({ set, kubeVersion: '1.32.12' });
    expect(old.stderr).toContain('(1 problem)');
    expect(old.stderr).toContain('sidecarless.source imageVolume needs Kubernetes 1.33 or later');
  });

  it('rejects through the schema a mode, a source or a size it does not know', async () => {
    const result = await helmTemplate({ values: { mode: 'sidecar-less', sidecarless: { source: 'copyFromImage', sizeLimit: '300M', extra: true } } });
    expect(result.code).not.toBe(0);
    for (const field of [
      'mode: mode must be one of the following: "sidecar", "sidecarless"',
      'sidecarless.source',
      'sidecarless.sizeLimit',
      'Additional property extra is not allowed',
    ]) {
      expect(result.stderr).toContain(field);
    }
    expect((await helmTemplate({ values: { mode: 'sidecarless', sidecarless: { sizeLimit: 256 } } })).stderr).toContain('sidecarless.sizeLimit');
  });
});
