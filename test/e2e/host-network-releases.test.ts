// Two releases of the chart with hostNetwork on one node: their Envoys share the node's network
// namespace, and with it the abstract Unix socket Envoy's hot restart binds (base id 0 unless
// told). Real Envoy, with the rendered bootstrap and command line and the rendered fixed ports, in
// a network namespace of its own with only loopback (test/support/sandbox.ts). Only the admin
// socket's path moves, as each pod has its own emptyDir there.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { CHART_DIR, renderChart } from '../support/chart/helm.js';
import { type RenderedPod, readPod } from '../support/chart/manifests.js';
import { ensureEnvoyBinary } from '../support/real-envoy/binary.js';
import { remapBootstrap, withConfigPath } from '../support/real-envoy/pod-bootstrap.js';
import { runSandboxed } from '../support/sandbox.js';
import type { SharedNetnsInput, SharedNetnsOutput } from '../support/shared-netns-main.js';

const RUNNER = resolve('test/.build/shared-netns-main.cjs');
const INGRESS_PORTS = { one: 8080, two: 28080 } as const;
const READY_PORTS = { one: 19003, two: 29003 } as const;
const STATS_PORTS = { one: 19001, two: 29001 } as const;

type Release = keyof typeof INGRESS_PORTS;

/** The chart's placeholder listener (values.yaml), on another port for the second release. */
function ingressOn(port: number): unknown {
  const values = parse(readFileSync(resolve(CHART_DIR, 'values.yaml'), 'utf8')) as {
    listeners: Array<{ address: { socket_address: { port_value: number } } }>;
  };
  const [ingress] = values.listeners;
  if (ingress === undefined) throw new Error('values.yaml has no placeholder listener');
  return { ...ingress, address: { socket_address: { ...ingress.address.socket_address, port_value: port } } };
}

const VALUES: Record<Release, Record<string, unknown>> = {
  one: { hostNetwork: true },
  two: {
    hostNetwork: true,
    statsListener: { port: STATS_PORTS.two },
    readinessListener: { port: READY_PORTS.two },
    shutdownManager: { port: 29002 },
    listeners: [ingressOn(INGRESS_PORTS.two)],
    envoy: { ports: [{ name: 'http', containerPort: INGRESS_PORTS.two, protocol: 'TCP' }] },
  },
};

/** Both releases' Envoys as the sandbox starts them; `args` edits the rendered command line. */
async function scenario(pods: Record<Release, RenderedPod>, args: (rendered: readonly string[]) => string[] = (a) => [...a]): Promise<SharedNetnsInput> {
  const envoy = await ensureEnvoyBinary();
  const files: Record<string, string> = {};
  const processes: Array<{ name: string; command: string[] }> = [];
  const requests: Array<{ name: string; port: number; request: string }> = [];
  for (const release of ['one', 'two'] as const) {
    const pod = pods[release];
    // Each pod's admin socket on its own emptyDir; every port as rendered.
    const bootstrap = remapBootstrap(pod.bootstrap, { port: (port) => port, path: (path) => `/tmp/${release}-${path.split('/').at(-1) ?? ''}` });
    files[`/tmp/${release}.json`] = JSON.stringify(bootstrap);
    processes.push({ name: release, command: [envoy, ...args(withConfigPath(pod.envoy.args ?? [], `/tmp/${release}.json`))] });
    requests.push(
      { name: `${release} ingress`, port: INGRESS_PORTS[release], request: 'GET / HTTP/1.1\r\nHost: example\r\nConnection: close\r\n\r\n' },
      {
        name: `${release} stats`,
        port: STATS_PORTS[release],
        request: 'GET /stats/prometheus?filter=server.live HTTP/1.1\r\nHost: example\r\nConnection: close\r\n\r\n',
      },
      { name: `${release} ready`, port: READY_PORTS[release], request: 'OPTIONS / HTTP/1.0\r\n\r\n' },
    );
  }
  return { files, processes, requests, timeoutMs: 15_000 };
}

describe('two hostNetwork releases in one network namespace', () => {
  let pods: Record<Release, RenderedPod>;
  beforeAll(async () => {
    const [one, two] = await Promise.all((['one', 'two'] as const).map(async (release) => readPod(await renderChart({ values: VALUES[release], release }))));
    if (one === undefined || two === undefined) throw new Error('a release did not render');
    pods = { one, two };
  });

  it("both Envoys start and serve every listener (readiness to a balancer's default HTTP/1.0 check), with the rendered command line", async () => {
    const out = await runSandboxed<SharedNetnsOutput>(RUNNER, await scenario(pods), [resolve('.cache')]);
    expect(out.answers).toEqual({
      'one ingress': 'HTTP/1.1 200 OK',
      'one stats': 'HTTP/1.1 200 OK',
      'one ready': 'HTTP/1.0 200 OK',
      'two ingress': 'HTTP/1.1 200 OK',
      'two stats': 'HTTP/1.1 200 OK',
      'two ready': 'HTTP/1.0 200 OK',
    });
    expect(out.processes.one?.state).toBe('running');
    expect(out.processes.two?.state).toBe('running');
  });

  it('without --disable-hot-restart, one of them cannot start: the test sees the defect', async () => {
    const withHotRestart = (args: readonly string[]): string[] => args.filter((arg) => arg !== '--disable-hot-restart');
    const out = await runSandboxed<SharedNetnsOutput>(RUNNER, await scenario(pods, withHotRestart), [resolve('.cache')]);
    const exited = Object.entries(out.processes).filter(([, p]) => p.state !== 'running');
    expect(exited).toHaveLength(1);
    expect(exited[0]?.[1].log).toMatch(/unable to bind domain socket with base_id=0.*errno=98/);
  });
});
