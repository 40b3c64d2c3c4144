// The test API server's own checks: a service-account token minted with TokenRequest carries
// exactly the permissions its RoleBinding grants, and a watch sees what that account wrote.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiServer, startApiServer } from './api-server.js';
import { KubeApiError, type KubeObject } from './client.js';
import { createNamespace, createServiceAccount, grantRole } from './resources.js';

const NAMESPACE = 'tokens';

let server: ApiServer;

beforeAll(async () => {
  server = await startApiServer();
  await createNamespace(server.admin, NAMESPACE, 'restricted');
  await createServiceAccount(server.admin, NAMESPACE, 'allowed');
  await createServiceAccount(server.admin, NAMESPACE, 'unbound');
  await grantRole(server.admin, NAMESPACE, 'allowed', 'create-events', [{ apiGroups: [''], resources: ['events'], verbs: ['create'] }]);
}, 150_000);

afterAll(async () => {
  await server?.stop();
});

const event = (name: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Event',
  metadata: { name, namespace: NAMESPACE },
  involvedObject: { kind: 'Pod', name: 'edge-0', namespace: NAMESPACE },
  reason: 'Checked',
  message: name,
  type: 'Normal',
});

async function statusOf(attempt: Promise<unknown>): Promise<number> {
  const error = await attempt.then(
    () => undefined,
    (e: unknown) => e,
  );
  return error instanceof KubeApiError ? error.status : 201;
}

describe('the test API server', () => {
  it("gives a service account's bound token exactly what its Role allows", async () => {
    const allowed = server.clientWith(await server.serviceAccountToken(NAMESPACE, 'allowed'));
    expect(await statusOf(allowed.create(event('by-allowed')))).toBe(201);
    expect(await statusOf(allowed.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'no', namespace: NAMESPACE } }))).toBe(403);
    expect(await statusOf(allowed.get('v1', 'Event', 'by-allowed', NAMESPACE))).toBe(403);
    const unbound = server.clientWith(await server.serviceAccountToken(NAMESPACE, 'unbound'));
    expect(await statusOf(unbound.create(event('by-unbound')))).toBe(403);
    expect(await statusOf(server.clientWith('not-a-token').create(event('by-nobody')))).toBe(401);
  });

  it('lets a watch find an object written before it or while it waits', async () => {
    await server.admin.create(event('before'));
    const before = await server.admin.waitFor<KubeObject>('v1', 'Event', NAMESPACE, (e) => e.metadata.name === 'before', 10_000);
    expect(before.message).toBe('before');
    const watching = server.admin.waitFor<KubeObject>('v1', 'Event', NAMESPACE, (e) => e.metadata.name === 'after', 10_000);
    await server.admin.create(event('after'));
    expect((await watching).reason).toBe('Checked');
  });
});
