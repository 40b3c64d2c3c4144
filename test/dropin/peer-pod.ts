// A pod as Envoy Gateway or Contour generates it, in podman: real Envoy (the test Envoy image) and
// the shutdown-manager container from this project's image with the peer's command, args, user,
// capabilities and volumes as its controller renders them. The pod has its own network namespace
// with only a loopback interface (`--network none`), so the peers' fixed ports cannot collide;
// kubelet's probes and Envoy's httpGet preStop are sent from inside it (nsenter into that namespace).
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ENVOY_IN_IMAGE } from '../image/support/images.js';
import { type PodmanObjects, podman } from '../image/support/podman.js';
import { contourBootstrap, egBootstrap } from '../support/peer-fixtures/pod-bootstraps.js';

export interface PeerPod {
  readonly manager: string;
  readonly envoy: string;
  /** Host PID of a process in the pod: its network namespace is the pod's. */
  readonly pid: string;
}

/** Envoy Gateway's: envoy-gateway from PATH, 65532, all capabilities dropped, no volume, root filesystem writable. */
export async function startEgPod(objects: PodmanObjects, images: { manager: string; envoy: string }, managerArgs: readonly string[]): Promise<PeerPod> {
  const config = configDir(objects, egBootstrap('127.0.0.1', 19000));
  const pod = await createPod(objects);
  const envoy = await run(
    objects,
    pod,
    'envoy',
    ['--user', '65532:65532', '--volume', `${config}:/config:ro`],
    images.envoy,
    envoyArgs(['--drain-strategy', 'immediate', '--drain-time-s', '60']),
  );
  const manager = await run(
    objects,
    pod,
    'shutdown-manager',
    [
      '--user',
      '65532:65532',
      '--cap-drop',
      'ALL',
      '--security-opt',
      'no-new-privileges',
      '--env',
      'ENVOY_POD_NAMESPACE=default',
      '--env',
      'ENVOY_POD_NAME=eg-pod',
      '--env',
      'KUBERNETES_SERVICE_HOST=10.96.0.1',
      '--entrypoint',
      '["envoy-gateway"]',
    ],
    images.manager,
    managerArgs,
  );
  return { manager, envoy, pid: await pidOf(envoy) };
}

/** Contour's: /bin/contour, the pod's user 65534, the shared emptyDir at /admin (admin socket and ready file). */
export async function startContourPod(objects: PodmanObjects, images: { manager: string; envoy: string }, managerArgs: readonly string[]): Promise<PeerPod> {
  const config = configDir(objects, contourBootstrap('/admin/admin.sock'));
  const admin = mkdtempSync(join(tmpdir(), 'esm-admin-'));
  chmodSync(admin, 0o777); // an emptyDir: writable by the pod's user
  objects.onRemove(() => rmSync(admin, { recursive: true, force: true }));
  const pod = await createPod(objects);
  const user = ['--user', '65534:65534', '--volume', `${admin}:/admin`];
  const envoy = await run(objects, pod, 'envoy', [...user, '--volume', `${config}:/config:ro`], images.envoy, envoyArgs([]));
  const manager = await run(
    objects,
    pod,
    'shutdown-manager',
    [...user, '--env', 'KUBERNETES_SERVICE_HOST=10.96.0.1', '--entrypoint', '["/bin/contour"]'],
    images.manager,
    managerArgs,
  );
  return { manager, envoy, pid: await pidOf(envoy) };
}

function envoyArgs(extra: readonly string[]): string[] {
  return ['--config-path', '/config/envoy.json', ...extra, '--use-dynamic-base-id', '--concurrency', '1', '--log-level', 'warning'];
}

function configDir(objects: PodmanObjects, bootstrap: object): string {
  const dir = mkdtempSync(join(tmpdir(), 'esm-peer-config-'));
  chmodSync(dir, 0o755);
  writeFileSync(join(dir, 'envoy.json'), JSON.stringify(bootstrap), { mode: 0o644 });
  objects.onRemove(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function createPod(objects: PodmanObjects): Promise<string> {
  const pod = objects.pod('peer');
  await podman(['pod', 'create', '--name', pod, '--network', 'none', ...objects.labelArgs]);
  return pod;
}

async function run(objects: PodmanObjects, pod: string, role: string, options: readonly string[], image: string, args: readonly string[]): Promise<string> {
  const id = objects.container(role);
  await podman(['run', '--detach', '--pod', pod, '--name', id, ...objects.labelArgs, ...options, image, ...args], 60_000);
  return id;
}

async function pidOf(container: string): Promise<string> {
  return (await podman(['inspect', '--format', '{{.State.Pid}}', container])).trim();
}

/** What the in-pod client saw: each GET's status, body and time (ms after the client started). */
export interface InPodResult {
  readonly answers: ReadonlyArray<{ readonly status: number; readonly body: string; readonly atMs: number } | { readonly error: string }>;
  readonly closedAtMs?: number;
}

/**
 * A client inside the pod's network namespace. `idle`: ports to hold one idle keep-alive
 * connection on (closed after `closeAfterMs`, if given); `gets`: requests sent at once, each
 * answered or failed; `untilUp`: retry each GET until it answers (a probe), bounded.
 */
export function inPod(
  pid: string,
  plan: { idle?: number[]; closeAfterMs?: number; gets: Array<{ port: number; path: string }>; untilUp?: boolean },
): Promise<InPodResult> {
  return new Promise((resolve, reject) => {
    const child = spawn('nsenter', ['-t', pid, '-n', process.execPath, '-e', CLIENT, JSON.stringify(plan)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve(JSON.parse(out) as InPodResult) : reject(new Error(`in-pod client exit ${code}: ${err}`))));
  });
}

const CLIENT = `
const http = require('node:http'), net = require('node:net');
const plan = JSON.parse(process.argv[1]); const t0 = Date.now(); const out = { answers: [] };
const get = (port, path) => new Promise((done) => {
  const req = http.get({ host: '127.0.0.1', port, path, agent: false }, (res) => { let body = ''; res.setEncoding('utf8').on('data', (c) => (body += c)); res.on('end', () => done({ status: res.statusCode, body, atMs: Date.now() - t0 })); });
  req.on('error', (e) => done({ error: e.code || e.message }));
});
const idle = (port) => new Promise((done, fail) => { const s = net.connect({ host: '127.0.0.1', port }, () => { s.write('GET / HTTP/1.1\\r\\nhost: pod\\r\\n\\r\\n'); s.once('data', () => done(s)); }); s.on('error', fail); });
(async () => {
  const sockets = await Promise.all((plan.idle || []).map(idle));
  if (plan.closeAfterMs !== undefined) setTimeout(() => { out.closedAtMs = Date.now() - t0; sockets.forEach((s) => s.destroy()); }, plan.closeAfterMs);
  out.answers = await Promise.all(plan.gets.map(async ({ port, path }) => {
    for (let i = 0; ; i++) { const a = await get(port, path); if (!plan.untilUp || a.status === 200 || i > 300) return a; await new Promise((r) => setTimeout(r, 50)); }
  }));
  sockets.forEach((s) => s.destroy());
  process.stdout.write(JSON.stringify(out)); process.exit(0);
})();
`;

export { ENVOY_IN_IMAGE };
