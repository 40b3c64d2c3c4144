// A real Kubernetes API server for the tests: etcd (Debian's, test/setup/debian.mjs) and
// kube-apiserver (./binary.ts) on 127.0.0.1 ports, their data, certificates and keys in a temp dir.
// Authentication: a static admin token (system:masters) and service-account tokens (TokenRequest);
// authorization RBAC; the default admission plugins, Pod Security among them. On request,
// kube-controller-manager runs beside it (./controllers.ts): workloads then make pods. No kubelet
// or scheduler: pods are stored and admitted, nothing runs them.
// Every process dies with the process that started them (parent-death signal), also when a test
// run is killed; stop() ends them and removes the temp dir.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { pollUntil } from '../poll.js';
import { freePort } from '../ports.js';
import { etcdBinary } from '../system-packages.js';
import { kubeBinary } from './binary.js';
import { type KubeClient, kubeClient } from './client.js';
import { CONTROLLERS_READY_NAMESPACE, controllerManagerArgs, ROOT_CA_CONFIGMAP } from './controllers.js';
import { makeKubePki } from './pki.js';
import { serviceAccountToken } from './resources.js';

export interface ApiServer {
  /** https://127.0.0.1:PORT */
  readonly url: string;
  readonly caFile: string;
  readonly caPem: string;
  readonly adminToken: string;
  /** A client with the admin token. */
  readonly admin: KubeClient;
  /** A client with another token (a service account's, say). */
  clientWith(token: string): KubeClient;
  /** A fresh bound token for the service account (which must exist). */
  serviceAccountToken(namespace: string, serviceAccount: string): Promise<string>;
  /** A kubeconfig file for the admin (helm, kubectl). */
  readonly kubeconfig: string;
  /** The last lines kube-apiserver and etcd wrote. */
  log(): string;
  stop(): Promise<void>;
}

/** Features a cluster the chart supports may have on: the sidecar-less image volume (beta, off by default in 1.33). */
const FEATURE_GATES = 'ImageVolume=true';
const READY_TIMEOUT_MS = 90_000;

interface Daemon {
  readonly child: ChildProcess;
  readonly exited: Promise<void>;
  exit(): string | undefined;
  log(): string;
}

/** Runs `binary` under setpriv's parent-death signal: SIGKILL the moment this process dies, however it dies. */
function startDaemon(name: string, binary: string, args: readonly string[]): Daemon {
  const child = spawn('setpriv', ['--pdeathsig', 'KILL', '--', binary, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  let exit: string | undefined;
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (log = (log + chunk).slice(-32_000)));
  const exited = new Promise<void>((done) =>
    child.once('exit', (code, signal) => {
      exit = `${name} exited (${signal ?? `code ${code}`})`;
      done();
    }),
  );
  child.once('error', (error) => (exit = `${name} did not start: ${error.message}`));
  return { child, exited, exit: () => exit, log: () => log };
}

async function stopDaemon(daemon: Daemon, graceMs: number): Promise<void> {
  if (daemon.exit() !== undefined) return;
  daemon.child.kill('SIGTERM');
  const timer = setTimeout(() => daemon.child.kill('SIGKILL'), graceMs);
  await daemon.exited;
  clearTimeout(timer);
}

const DIR_PREFIX = 'esm-kube-';

/** Removes the temp dirs of servers whose test process was killed (its exit handler never ran). */
function removeOrphanedDirs(): void {
  for (const name of readdirSync(tmpdir()).filter((n) => n.startsWith(DIR_PREFIX))) {
    const dir = join(tmpdir(), name);
    let owner = Number.NaN;
    try {
      owner = Number(readFileSync(join(dir, 'owner.pid'), 'utf8'));
    } catch {
      // Not one of ours, or being made right now: left alone.
    }
    if (Number.isInteger(owner) && owner > 0 && !processExists(owner)) rmSync(dir, { recursive: true, force: true });
  }
}

function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export interface ApiServerOptions {
  /** Run kube-controller-manager too (see ./controllers.ts); its start is part of the wait. */
  readonly controllers?: boolean;
}

export async function startApiServer(options: ApiServerOptions = {}): Promise<ApiServer> {
  const apiserverBinary = await kubeBinary('kube-apiserver');
  const controllerManagerBinary = options.controllers === true ? await kubeBinary('kube-controller-manager') : undefined;
  const etcd = await etcdBinary();
  removeOrphanedDirs();
  const dir = mkdtempSync(join(tmpdir(), DIR_PREFIX));
  writeFileSync(join(dir, 'owner.pid'), String(process.pid));
  const pki = makeKubePki(dir);
  const [etcdPort, peerPort, securePort] = [await freePort(), await freePort(), await freePort()];
  const etcdUrl = `http://127.0.0.1:${etcdPort}`;
  const peerUrl = `http://127.0.0.1:${peerPort}`;
  const daemons: Daemon[] = [];
  const killAtExit = (): void => {
    for (const daemon of daemons) daemon.child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', killAtExit);
  daemons.push(
    startDaemon('etcd', etcd, [
      '--name',
      'esm',
      '--data-dir',
      join(dir, 'etcd'),
      '--log-level',
      'warn',
      '--logger',
      'zap',
      '--listen-client-urls',
      etcdUrl,
      '--advertise-client-urls',
      etcdUrl,
      '--listen-peer-urls',
      peerUrl,
      '--initial-advertise-peer-urls',
      peerUrl,
      '--initial-cluster',
      `esm=${peerUrl}`,
    ]),
  );
  daemons.push(
    startDaemon('kube-apiserver', apiserverBinary, [
      '--etcd-servers',
      etcdUrl,
      '--bind-address',
      '127.0.0.1',
      '--advertise-address',
      '127.0.0.1',
      '--secure-port',
      String(securePort),
      // 127.0.0.1 is not a valid Endpoints address, and no other API server shares this etcd.
      '--endpoint-reconciler-type',
      'none',
      '--cert-dir',
      join(dir, 'certs'),
      '--tls-cert-file',
      pki.certFile,
      '--tls-private-key-file',
      pki.keyFile,
      '--token-auth-file',
      pki.tokenFile,
      '--authorization-mode',
      'RBAC',
      '--anonymous-auth=false',
      '--service-account-issuer',
      'https://kubernetes.default.svc.cluster.local',
      '--service-account-key-file',
      pki.serviceAccountPublicKeyFile,
      '--service-account-signing-key-file',
      pki.serviceAccountKeyFile,
      '--service-cluster-ip-range',
      '10.96.0.0/24',
      '--allow-privileged=true',
      '--feature-gates',
      FEATURE_GATES,
      '--profiling=false',
    ]),
  );
  const url = `https://127.0.0.1:${securePort}`;
  const caPem = readFileSync(pki.caFile, 'utf8');
  const kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(
    kubeconfig,
    stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'esm-test', cluster: { server: url, 'certificate-authority': pki.caFile } }],
      users: [{ name: 'admin', user: { token: pki.adminToken } }],
      contexts: [{ name: 'esm-test', context: { cluster: 'esm-test', user: 'admin' } }],
      'current-context': 'esm-test',
    }),
    { mode: 0o600 },
  );
  const clientWith = (token: string): KubeClient => kubeClient({ url, caPem, token });
  const admin = clientWith(pki.adminToken);
  const log = (): string =>
    daemons
      .map((d) => d.log())
      .join('\n')
      .slice(-8_000);
  const stop = async (): Promise<void> => {
    // In reverse order of start: the controllers, then the API server, then etcd; none complains of a missing peer.
    for (const daemon of [...daemons].reverse()) await stopDaemon(daemon, 10_000);
    rmSync(dir, { recursive: true, force: true });
    process.removeListener('exit', killAtExit);
  };
  try {
    // The API server's only signal that it is ready is its answer on /readyz (etcd reached, post-start hooks done).
    await pollUntil(
      'kube-apiserver /readyz',
      async () => {
        const dead = daemons.map((d) => d.exit()).find((exit) => exit !== undefined);
        if (dead !== undefined) throw new Error(dead);
        return (await admin.send('GET', '/readyz').catch(() => undefined))?.status === 200;
      },
      { timeoutMs: READY_TIMEOUT_MS, everyMs: 100 },
    );
    if (controllerManagerBinary !== undefined) {
      daemons.push(
        startDaemon('kube-controller-manager', controllerManagerBinary, controllerManagerArgs({ kubeconfig, caFile: pki.caFile, featureGates: FEATURE_GATES })),
      );
      // Its controllers have started once the root-CA publisher has filled in a namespace.
      await pollUntil(
        'kube-controller-manager publishing kube-root-ca.crt',
        async () => {
          const dead = daemons.map((d) => d.exit()).find((exit) => exit !== undefined);
          if (dead !== undefined) throw new Error(dead);
          return (await admin.get('v1', 'ConfigMap', ROOT_CA_CONFIGMAP, CONTROLLERS_READY_NAMESPACE)) !== undefined;
        },
        { timeoutMs: READY_TIMEOUT_MS, everyMs: 100 },
      );
    }
  } catch (error) {
    const message = `${(error as Error).message}\n${log()}`;
    await stop();
    throw new Error(message);
  }
  return {
    url,
    caFile: pki.caFile,
    caPem,
    adminToken: pki.adminToken,
    admin,
    clientWith,
    serviceAccountToken: (namespace, serviceAccount) => serviceAccountToken(admin, namespace, serviceAccount),
    kubeconfig,
    log,
    stop,
  };
}
