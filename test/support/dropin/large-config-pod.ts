// A large gateway's pod in the sandbox: the peer's HTTPS fixture grown to many TLS filter chains or
// listeners (../../support/large-config/), beside an HTTP listener holding an idle HTTP/1.1 and an
// idle HTTP/2 connection and the peer's stats listener with a scraper, real Envoy on the peer's own
// ports and admin address (../../support/sandbox.ts, ./pod.ts), drained by our `shutdown` command or
// by the single executable called as the peer's own hook. The drop-in test and the bench's
// large-config scenario both run it; what they conclude is theirs.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { type LargeConfigSize, largeBootstrap } from '../large-config/expand.js';
import { testCertificate } from '../peer-fixtures/certificate.js';
import { type PeerName, peerFixture } from '../peer-fixtures/fixtures.js';
import { CONTOUR_REAL_ADMIN_SOCKET, EG_REAL_ADMIN_PORT } from '../peer-fixtures/pod-bootstraps.js';
import { arrayField, eachObject, field, isObject, type JsonObject, objectField, setField, stringField } from '../peer-fixtures/proto-json.js';
import { ensureEnvoyBinary } from '../real-envoy/binary.js';
import { runSandboxed } from '../sandbox.js';
import type { PodObservation, PodScenario } from './pod.js';

/** The pod runner the tests' global setup bundles (test/support/dropin-pod-main.ts). */
const POD_RUNNER = resolve('test/.build/dropin-pod-main.cjs');
/** Where the fixture's clusters send requests, inside the sandbox. */
const BACKEND_PORT = 3000;
/**
 * The drain timeout: far past the minimum drain and quiet period. The hook spaces its reads by
 * 20 times what the last one cost (to keep to 5 % of Envoy's main thread), at most a check
 * interval, and on a busy machine a read's wall time, and with it the space, grows.
 */
const DRAIN_TIMEOUT = '30s';

/** How each way of draining is called, and where its peer's pod keeps things. */
export const HOOKS = {
  ours: {
    peer: 'envoy-gateway',
    hook: [
      resolve('dist/envoy-shutdown-manager'),
      'shutdown',
      '--admin-address',
      '127.0.0.1:19000',
      '--ready-file',
      '/tmp/ready',
      '--connections',
      'listeners',
      '--ignore-idle-connections',
      '--min-drain-duration',
      '1s',
      '--quiet-period',
      '500ms',
      '--drain-timeout',
      DRAIN_TIMEOUT,
      '--ignore-listener',
      '0.0.0.0_19001',
    ],
    readyFile: '/tmp/ready',
  },
  // As Envoy Gateway renders the preStop hook for an EnvoyProxy with these two durations.
  'envoy-gateway': {
    peer: 'envoy-gateway',
    hook: ['envoy-gateway', 'envoy', 'shutdown', `--drain-timeout=${DRAIN_TIMEOUT}`, '--min-drain-duration=1s'],
    readyFile: '/tmp/shutdown-ready',
  },
  // As Contour renders it: its defaults (no minimum beyond the check delay, 0; no timeout; text logs).
  contour: { peer: 'contour', hook: ['/bin/contour', 'envoy', 'shutdown'], readyFile: '/admin/ok' },
} as const satisfies Record<string, { peer: PeerName; hook: readonly string[]; readyFile: string }>;

export type Hook = keyof typeof HOOKS;

/** The HTTP listener that holds the idle pool, and the stats listener the scraper calls, per peer (as the fixtures have them). */
const PORTS: Record<PeerName, { http: number; stats: number }> = {
  'envoy-gateway': { http: 10080, stats: 19001 },
  contour: { http: 8080, stats: 8002 },
};

/**
 * The peer's HTTPS fixture grown to `size`, with an HTTP listener (Envoy Gateway's `http` case;
 * Contour's `ingress` has its own), the admin API where the pod's tap forwards to.
 */
function podBootstrap(peer: PeerName, size: LargeConfigSize, dir: string): JsonObject {
  const env = { backend: { address: '127.0.0.1', port: BACKEND_PORT }, certificate: testCertificate() };
  const bootstrap = largeBootstrap(peer, size, env);
  const listeners = arrayField(objectField(bootstrap, 'static_resources') ?? {}, 'listeners');
  if (peer === 'envoy-gateway') {
    const http = arrayField(objectField(peerFixture(peer, 'http').bootstrap(env), 'static_resources') ?? {}, 'listeners')
      .filter(isObject)
      .find((l) => stringField(l, 'name') === 'default/eg/http');
    if (http === undefined) throw new Error('envoy-gateway/http: no listener default/eg/http');
    listeners.push(http);
  }
  const admin = objectField(bootstrap, 'admin') ?? {};
  const tapped = JSON.stringify(field(admin, 'address'));
  const real: JsonObject =
    peer === 'envoy-gateway' ? { socket_address: { address: '127.0.0.1', port_value: EG_REAL_ADMIN_PORT } } : { pipe: { path: CONTOUR_REAL_ADMIN_SOCKET } };
  setField(bootstrap, 'admin', { ...admin, address: real });
  // The stats listener serves the admin API's /stats/prometheus through a cluster at the admin
  // address, where the pod's tap now listens: pointed at the real admin API, the scraper's requests
  // are not recorded as the hook's.
  for (const cluster of arrayField(objectField(bootstrap, 'static_resources') ?? {}, 'clusters')) {
    eachObject(cluster, (object) => {
      if (JSON.stringify(field(object, 'address')) === tapped) setField(object, 'address', real);
    });
  }
  writeFileSync(join(dir, 'envoy.json'), JSON.stringify(bootstrap));
  return bootstrap;
}

export interface LargePodOptions {
  /** The bundled pod runner; POD_RUNNER unless set. */
  readonly runner?: string;
  /** How long Envoy may take to load the configuration (the pod's own bound unless set). */
  readonly envoyStartBoundMs?: number;
  /** Measure Envoy's cost per read the hook made, once it exited (PodObservation.readCost). */
  readonly replayReads?: boolean;
}

/** One drain of a pod at `size` by `hook`: everything the pod saw. */
export async function drainLargePod(hook: Hook, size: LargeConfigSize, options: LargePodOptions = {}): Promise<PodObservation> {
  const { peer, hook: argv, readyFile } = HOOKS[hook];
  const dir = mkdtempSync(join(tmpdir(), 'esm-large-'));
  try {
    podBootstrap(peer, size, dir);
    const envoyBinary = await ensureEnvoyBinary();
    const scenario: PodScenario = {
      peer,
      envoyBinary,
      hook: argv,
      bootstrapFile: join(dir, 'envoy.json'),
      backendPort: BACKEND_PORT,
      idlePoolOn: PORTS[peer].http,
      scrape: { port: PORTS[peer].stats, path: '/stats/prometheus' },
      readyFile,
      managerPort: 0,
      readyPath: '',
      ...(options.envoyStartBoundMs === undefined ? {} : { envoyStartBoundMs: options.envoyStartBoundMs }),
      ...(options.replayReads === true ? { replayReads: true } : {}),
    };
    return await runSandboxed<PodObservation>(options.runner ?? POD_RUNNER, scenario, [dirname(envoyBinary), dirname(testCertificate().certFile), dir]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The message of the line the hooks log once they count only connections with a request in flight. */
export const IDLE_ONLY_MSG = 'no request for the quiet period: counting only connections with a request in flight';

/** The fields of the hook's first log line with this message, JSON or text (`... <msg> key=value ...`, our text format); undefined: no such line. */
export function logged(stdout: string, msg: string): Record<string, unknown> | undefined {
  for (const line of stdout.split('\n')) {
    if (line.startsWith('{')) {
      const entry = JSON.parse(line) as Record<string, unknown>;
      if (entry.msg === msg) return entry;
      continue;
    }
    const at = line.indexOf(` ${msg}`);
    if (at < 0) continue;
    const fields: Record<string, unknown> = {};
    for (const [, key, value] of line.slice(at + msg.length + 1).matchAll(/(\w+)=(\S+)/g)) {
      try {
        fields[key as string] = JSON.parse(value as string);
      } catch {
        fields[key as string] = value;
      }
    }
    return fields;
  }
  return undefined;
}
