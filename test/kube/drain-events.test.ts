// The manager's Events against a real kube-apiserver (test/support/kube): for every way a drain of
// real Envoy ends, exactly one Event on the pod with the documented reason, type and count,
// created with a service-account token bound to the chart's own Role; and with a token the Role
// is not bound to, a drain exactly like one without Events, one log line, no second attempt.

import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type K8sObject, NAMESPACE, renderChart } from '../support/chart/helm.js';
import { type LogLine, tempDir } from '../support/cli.js';
import { ENVOY, SIDECAR, startEnvoyPod } from '../support/envoy-pod.js';
import { type ApiServer, startApiServer } from '../support/kube/api-server.js';
import { createNamespace, createServiceAccount } from '../support/kube/resources.js';
import { type DrainOutcome, startObservedDrain } from '../support/observed-drain.js';
import { startUpstream } from '../support/real-envoy/upstream.js';

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
const defer = (cleanup: () => unknown): void => void cleanups.push(cleanup);

/** The ServiceAccount the chart makes for release `edge`, bound to its Role. */
const CHART_ACCOUNT = 'edge-envoy-shutdown-manager';
/** A ServiceAccount no Role is bound to. */
const UNBOUND_ACCOUNT = 'no-events';

let api: ApiServer;
const dirs = tempDir('esm-events-sa-');
beforeAll(async () => {
  api = await startApiServer();
  await createNamespace(api.admin, NAMESPACE, 'restricted');
  // The chart's own ServiceAccount, Role and RoleBinding, as helm renders them for events.enabled.
  const rendered = await renderChart({ set: ['hookToken.value=kube-events-test-token', 'events.enabled=true'] });
  for (const object of rendered.filter((o: K8sObject) => ['ServiceAccount', 'Role', 'RoleBinding'].includes(o.kind))) {
    await api.admin.create({ ...object, metadata: { ...object.metadata, namespace: NAMESPACE } });
  }
  await createServiceAccount(api.admin, NAMESPACE, UNBOUND_ACCOUNT);
}, 180_000);
afterAll(async () => {
  await api?.stop();
  dirs.cleanup();
});

/** The manager's environment in a pod of the chart: the API server, a projected token and CA, the pod from the downward API. */
async function podEnv(serviceAccount: string, pod: { name: string; uid: string }): Promise<Record<string, string>> {
  const dir = join(dirs.path, `${pod.name}-${serviceAccount}`);
  mkdirSync(dir);
  writeFileSync(join(dir, 'token'), await api.serviceAccountToken(NAMESPACE, serviceAccount));
  writeFileSync(join(dir, 'ca.crt'), api.caPem);
  const { hostname, port } = new URL(api.url);
  return {
    KUBERNETES_SERVICE_HOST: hostname,
    KUBERNETES_SERVICE_PORT: port,
    ENVOY_SHUTDOWN_SERVICE_ACCOUNT_DIR: dir,
    ENVOY_SHUTDOWN_POD_NAME: pod.name,
    ENVOY_SHUTDOWN_POD_NAMESPACE: NAMESPACE,
    ENVOY_SHUTDOWN_POD_UID: pod.uid,
    ENVOY_SHUTDOWN_NODE_NAME: 'node-1',
  };
}

interface StoredEvent {
  readonly type: string;
  readonly reason: string;
  readonly message: string;
  readonly count: number;
  readonly involvedObject: Record<string, string>;
  readonly source: Record<string, string>;
}

async function eventsOn(uid: string): Promise<StoredEvent[]> {
  const answer = await api.admin.call('GET', `/api/v1/namespaces/${NAMESPACE}/events?fieldSelector=${encodeURIComponent(`involvedObject.uid=${uid}`)}`);
  return (answer.body as { items: StoredEvent[] }).items;
}

/**
 * A TCP relay to the API server that counts connections: the manager opens one per attempt (no
 * keep-alive), and the API server counts no refused request in its metrics.
 */
async function countingRelay(): Promise<{ port: number; connections: () => number }> {
  const target = new URL(api.url);
  let connections = 0;
  const relay = createServer((client) => {
    connections += 1;
    const upstream = connect(Number(target.port), target.hostname);
    client.pipe(upstream).pipe(client);
    const end = (): void => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
  });
  await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
  defer(() => new Promise((resolve) => relay.close(resolve)));
  const address = relay.address();
  return { port: typeof address === 'object' && address !== null ? address.port : 0, connections: () => connections };
}

const index = (lines: readonly LogLine[], msg: string): number => lines.findIndex((line) => line.msg === msg);

describe('Events on a real API server', () => {
  it.each<[DrainOutcome, string, string, RegExp]>([
    ['drained', 'Normal', 'EnvoyDrained', /^drained in [\d.]+ s, 0 connections left, Envoy released \d+ ms after its last connection was seen closed$/],
    ['timeout', 'Warning', 'EnvoyDrainTimeout', /^drain timed out after [\d.]+ s, 1 connection left, Envoy released \d+ ms after the drain ended$/],
    ['unknown-count', 'Warning', 'EnvoyDrainUnknownCount', /^drain timed out after [\d.]+ s with the connection count unknown \(unknown is not zero\)/],
    ['unreachable', 'Warning', 'EnvoyUnreachable', /^Envoy's admin API unreachable after [\d.]+ s/],
  ])('a drain that ends %s: exactly one %s %s Event on the pod', async (outcome, type, reason, message) => {
    const pod = { name: `edge-gw-${outcome}`, uid: randomUUID() };
    const observed = await startObservedDrain(defer, { args: ['--events'], env: await podEnv(CHART_ACCOUNT, pod) });
    const { released } = await observed.drain(outcome);
    const created = await observed.manager.waitForLog((line) => line.msg === 'drain event created');
    expect(created).toMatchObject({ component: 'events', reason, type, status: 201 });
    // After Envoy's release, never before it.
    expect(index(observed.manager.logs, 'drain event created')).toBeGreaterThan(observed.manager.logs.indexOf(released));
    const events = await eventsOn(pod.uid);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      type,
      reason,
      count: 1,
      involvedObject: { apiVersion: 'v1', kind: 'Pod', name: pod.name, namespace: NAMESPACE, uid: pod.uid },
      source: { component: 'envoy-shutdown-manager', host: 'node-1' },
    });
    expect(events[0]?.message).toMatch(message);
    // The manager stops at once: nothing left in flight.
    expect((await observed.stop()).code).toBe(0);
    expect(await eventsOn(pod.uid)).toHaveLength(1);
  });

  it("names why an evicted pod was terminated: the DisruptionTarget reason the Eviction API set, read with the chart Role's get on pods", async () => {
    const name = 'edge-gw-evicted';
    // Bound to a node no kubelet runs: once evicted it stays terminating, as a pod does while it drains.
    const restricted = {
      runAsNonRoot: true,
      runAsUser: 65532,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
      seccompProfile: { type: 'RuntimeDefault' },
    };
    const { object: created } = await api.admin.create({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: NAMESPACE },
      spec: { nodeName: 'node-1', containers: [{ name: 'envoy', image: 'envoy', securityContext: restricted }] },
    });
    await api.admin.call('POST', `/api/v1/namespaces/${NAMESPACE}/pods/${name}/eviction`, {
      apiVersion: 'policy/v1',
      kind: 'Eviction',
      metadata: { name, namespace: NAMESPACE },
    });
    const pod = { name, uid: (created.metadata as { uid?: string }).uid ?? '' };
    const observed = await startObservedDrain(defer, { args: ['--events'], env: await podEnv(CHART_ACCOUNT, pod) });
    await observed.drain('drained');
    expect(await observed.manager.waitForLog((line) => line.msg === 'drain event created')).toMatchObject({
      reason: 'EnvoyDrained',
      disruption: 'EvictionByEvictionAPI',
      status: 201,
    });
    const events = await eventsOn(pod.uid);
    expect(events).toHaveLength(1);
    expect(events[0]?.message).toMatch(/^drained in [\d.]+ s, 0 connections left, .*; pod terminated for EvictionByEvictionAPI$/);
  });

  it("native sidecar: the manager's own drain, its Event sent after Envoy's hook was answered and before the manager exits", async () => {
    const upstream = await startUpstream();
    defer(() => upstream.close());
    const pod = { name: 'edge-gw-native', uid: randomUUID() };
    const envoyPod = await startEnvoyPod({
      realEnvoy: { upstreamPort: upstream.port, values: { shutdown: { drainTimeout: 10 } } },
      mode: 'native',
      hookToken: 'kube-events-native-hook-token',
      terminationGracePeriodSeconds: 20,
      managerArgs: ['--events'],
      sidecarEnv: {
        ...(await podEnv(CHART_ACCOUNT, pod)),
        ENVOY_SHUTDOWN_CONNECTIONS: 'listeners',
        ENVOY_SHUTDOWN_MIN_DRAIN_DURATION: '300ms',
        ENVOY_SHUTDOWN_CHECK_INTERVAL: '100ms',
      },
    });
    defer(() => envoyPod.destroy());
    const timeline = await envoyPod.pod.terminate();
    expect(timeline.find('prestop-end', ENVOY)?.detail).toBe('HTTP 200');
    const logs = envoyPod.pod.container(SIDECAR).logs();
    expect(logs.find((line) => line.msg === 'drain event created')).toMatchObject({ reason: 'EnvoyDrained', status: 201 });
    // Seen once under load without the sidecar's last line: the timeline, its last lines and stderr say how it ended.
    const why = `${timeline.format()}\n${JSON.stringify(logs.slice(-4))}\n${envoyPod.pod.container(SIDECAR).stderr}`;
    expect(
      logs.findIndex((line) => line.msg === 'drain event created'),
      why,
    ).toBeLessThan(logs.findIndex((line) => line.msg === 'shutdown manager stopped'));
    expect(await eventsOn(pod.uid)).toMatchObject([{ type: 'Normal', reason: 'EnvoyDrained', count: 1, involvedObject: { name: pod.name, uid: pod.uid } }]);
  });

  it('without the Role: the drain as without Events, one log line, no second attempt', async () => {
    const pod = { name: 'edge-gw-forbidden', uid: randomUUID() };
    const relay = await countingRelay();
    const plain = await startObservedDrain(defer);
    const forbidden = await startObservedDrain(defer, {
      args: ['--events'],
      env: { ...(await podEnv(UNBOUND_ACCOUNT, pod)), KUBERNETES_SERVICE_PORT: String(relay.port) },
    });
    const without = await plain.drain('drained');
    const refused = await forbidden.drain('drained');
    // The same drain, the same answer to Envoy, the same exit code.
    expect(refused.hook.code).toBe(without.hook.code);
    expect(refused.prestop.status).toBe(without.prestop.status);
    expect(JSON.parse(refused.prestop.body)).toMatchObject({ result: 'drained', exitCode: 0 });
    expect(refused.released).toMatchObject({ result: without.released.result, connections: without.released.connections });
    const failed = await forbidden.manager.waitForLog((line) => line.msg.startsWith('could not create the drain event'));
    expect(failed).toMatchObject({ level: 'warn', component: 'events', status: 403, reason: 'EnvoyDrained' });
    expect(String(failed.why)).toMatch(/^Forbidden/);
    // Envoy was released first: its release line comes before the failure's.
    expect(index(forbidden.manager.logs, 'drain finished: releasing envoy')).toBeLessThan(forbidden.manager.logs.indexOf(failed));
    // A second drain on the same manager: nothing attempted, nothing logged about events.
    await forbidden.drain('drained');
    const stopped = await forbidden.stop();
    expect(stopped.code).toBe(0);
    expect(stopped.logs.filter((line) => line.component === 'events')).toHaveLength(1);
    // One read of the pod (its reason to terminate), one Event refused; nothing for the second drain.
    expect(relay.connections()).toBe(2);
    expect(await eventsOn(pod.uid)).toEqual([]);
    // No token in any line.
    const token = readFileSync(join(dirs.path, `${pod.name}-${UNBOUND_ACCOUNT}`, 'token'), 'utf8');
    expect(stopped.stdout).not.toContain(token);
  });
});
