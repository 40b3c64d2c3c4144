import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { eventsSetup } from '../../../src/events/in-cluster.js';

const dir = mkdtempSync(join(tmpdir(), 'esm-sa-'));
writeFileSync(join(dir, 'token'), 'secret-token');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const cluster = {
  KUBERNETES_SERVICE_HOST: '10.96.0.1',
  KUBERNETES_SERVICE_PORT: '443',
  ENVOY_SHUTDOWN_SERVICE_ACCOUNT_DIR: dir,
  ENVOY_SHUTDOWN_POD_NAME: 'gw-1',
  ENVOY_SHUTDOWN_POD_NAMESPACE: 'edge',
  ENVOY_SHUTDOWN_POD_UID: '0b6f3c4e-1d2a-4f5e-9a8b-7c6d5e4f3a2b',
};

describe('eventsSetup', () => {
  it('in a cluster: the API server, the token directory and the pod', () => {
    expect(eventsSetup({ ...cluster, KUBERNETES_SERVICE_HOST: '[fd00::1]', ENVOY_SHUTDOWN_NODE_NAME: 'node-1' })).toEqual({
      kind: 'on',
      target: {
        host: 'fd00::1',
        port: 443,
        serviceAccountDir: dir,
        pod: { name: 'gw-1', namespace: 'edge', uid: cluster.ENVOY_SHUTDOWN_POD_UID, nodeName: 'node-1' },
      },
    });
  });

  it('outside a cluster: off, with the reason, and nothing else checked', () => {
    expect(eventsSetup({})).toEqual({ kind: 'off', why: 'KUBERNETES_SERVICE_HOST/PORT not set: not in a cluster' });
    expect(eventsSetup({ ...cluster, ENVOY_SHUTDOWN_SERVICE_ACCOUNT_DIR: join(dir, 'missing'), ENVOY_SHUTDOWN_POD_NAME: '' })).toEqual({
      kind: 'off',
      why: `no service-account token in ${join(dir, 'missing')}`,
    });
  });

  it.each([
    [{ ENVOY_SHUTDOWN_POD_UID: undefined }, '--events needs ENVOY_SHUTDOWN_POD_UID (the chart sets it from the downward API)'],
    [{ ENVOY_SHUTDOWN_POD_NAME: 'Gw_1' }, 'ENVOY_SHUTDOWN_POD_NAME: not a Kubernetes name: "Gw_1"'],
    [{ ENVOY_SHUTDOWN_POD_NAMESPACE: 'a/b' }, 'ENVOY_SHUTDOWN_POD_NAMESPACE: not a Kubernetes name: "a/b"'],
    [{ KUBERNETES_SERVICE_PORT: '443x' }, 'KUBERNETES_SERVICE_PORT: not a port: "443x"'],
  ])('in a cluster, %j is a usage error', (change, message) => {
    expect(() => eventsSetup({ ...cluster, ...change })).toThrow(message);
  });
});
