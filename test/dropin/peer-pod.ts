// The peers' generated pods (Envoy Gateway's Deployment, Contour's DaemonSet, as their
// controllers render them) run in podman by ../support/peer-pod/peer-podman-pod.ts: real Envoy
// (the test Envoy image) with each peer's pod bootstrap, its admin API where the peer's hook looks
// for it, and the shutdown-manager container from this project's image with the peer's command,
// user, capabilities and volumes and the arguments a test gives. The pod has its own network
// namespace; kubelet's probes and Envoy's httpGet preStop are sent from inside it (nsenter).
import { spawn } from 'node:child_process';
import type { PeerName } from '../support/peer-fixtures/fixtures.js';
import { contourBootstrap, egBootstrap } from '../support/peer-fixtures/pod-bootstraps.js';
import type { JsonObject } from '../support/peer-fixtures/proto-json.js';
import { peerPodSpec } from '../support/peer-pod/peer-cases.js';
import { startPeerPod } from '../support/peer-pod/peer-podman-pod.js';
import type { PodmanObjects } from '../support/podman/podman.js';

export interface PeerPod {
  readonly manager: string;
  readonly envoy: string;
  /** Host PID of a process in the pod: its network namespace is the pod's. */
  readonly pid: string;
}

/** Each peer's pod bootstrap and the pod's ports: its listener, stats, readiness and manager. */
const PEERS: Readonly<Record<PeerName, { readonly bootstrap: () => object; readonly ports: readonly number[] }>> = {
  'envoy-gateway': { bootstrap: () => egBootstrap('127.0.0.1', 19000), ports: [10080, 19001, 19002, 19003] },
  contour: { bootstrap: () => contourBootstrap('/admin/admin.sock'), ports: [8080, 8002, 8090] },
};

async function startPeer(objects: PodmanObjects, images: { manager: string; envoy: string }, peer: PeerName, managerArgs: readonly string[]): Promise<PeerPod> {
  const spec = peerPodSpec(peer);
  const containers = spec.containers.map((c) => (c.name === 'shutdown-manager' ? { ...c, args: [...managerArgs] } : c));
  const pod = await startPeerPod(objects, {
    spec: { ...spec, containers },
    bootstrap: PEERS[peer].bootstrap() as JsonObject,
    images,
    backends: [],
    ports: PEERS[peer].ports,
    envoyMounts: [],
  });
  return { manager: pod.container('shutdown-manager').id, envoy: pod.container('envoy').id, pid: pod.pid };
}

/** Envoy Gateway's: envoy-gateway from PATH, 65532, all capabilities dropped, no volume, root filesystem writable. */
export function startEgPod(objects: PodmanObjects, images: { manager: string; envoy: string }, managerArgs: readonly string[]): Promise<PeerPod> {
  return startPeer(objects, images, 'envoy-gateway', managerArgs);
}

/** Contour's: /bin/contour, the pod's user 65534, the shared emptyDir at /admin (admin socket and ready file). */
export function startContourPod(objects: PodmanObjects, images: { manager: string; envoy: string }, managerArgs: readonly string[]): Promise<PeerPod> {
  return startPeer(objects, images, 'contour', managerArgs);
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
