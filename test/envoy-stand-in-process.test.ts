// The stand-in as a process (signals, quitquitquit), its admin addresses, and admin faults.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { standInHarness } from './support/envoy/harness.js';
import { adminRequest, parseAddress } from './support/envoy/http1-client.js';
import { type EnvoyProcess, startEnvoyProcess } from './support/envoy/process.js';

const { start, h1, defer } = standInHarness();

async function startProcess(...args: Parameters<typeof startEnvoyProcess>): Promise<EnvoyProcess> {
  const envoy = await startEnvoyProcess(...args);
  defer(() => envoy.child.kill('SIGKILL'));
  return envoy;
}

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'envoy-stand-in-'));
  defer(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

describe('process entry', () => {
  it('prints ready, logs admin calls, and on SIGTERM drops connections and exits 0', async () => {
    const envoy = await startProcess({ listeners: [{ name: 'ingress', kind: 'http' }] });
    expect(envoy.events[0]).toMatchObject({ event: 'ready', adminAddress: envoy.adminAddress, pid: envoy.child.pid });
    expect(envoy.adminAddress).toMatch(/^127\.0\.0\.1:\d+$/);
    const client = await h1(envoy.listeners['ingress'] ?? 0);
    expect((await client.request('GET', '/')).status).toBe(200);
    expect(await adminRequest(envoy.adminAddress, 'GET', '/ready?x')).toMatchObject({ status: 200, body: 'LIVE\n' });
    await vi.waitFor(() => expect(envoy.events).toContainEqual(expect.objectContaining({ event: 'admin-call', method: 'GET', path: '/ready', query: 'x' })));

    envoy.child.kill('SIGTERM');
    expect(await envoy.exited).toBe(0);
    await client.closed;
    expect(envoy.events.map((event) => event['event'])).toEqual(['ready', 'admin-call', 'sigterm', 'exit']);
  });

  it('exits 0 after POST /quitquitquit has answered', async () => {
    const envoy = await startProcess({});
    expect(envoy.listeners).toEqual({});
    expect(await adminRequest(envoy.adminAddress, 'POST', '/quitquitquit')).toMatchObject({ status: 200, body: 'OK\n' });
    expect(await envoy.exited).toBe(0);
    expect(envoy.events.at(-1)).toMatchObject({ event: 'exit', reason: 'quitquitquit' });
  });

  it('fails fast with a clear message on bad options', async () => {
    await expect(startEnvoyProcess({ workers: 0 })).rejects.toThrow('workers must be an integer >= 1');
  });
});

describe('admin addresses', () => {
  it('serves admin over a Unix socket', async () => {
    const dir = tempDir();
    const standIn = await start({ admin: { unixSocket: join(dir, 'admin.sock') } });
    expect(standIn.adminAddress).toBe(`unix:${join(dir, 'admin.sock')}`);
    expect(await adminRequest(standIn.adminAddress, 'GET', '/ready')).toMatchObject({ status: 200, body: 'LIVE\n' });
    expect(standIn.stat('listener.admin.downstream_cx_total')).toBe(1);
  });

  it('serves admin over an abstract Unix socket (leading @)', async () => {
    const name = `@envoy-stand-in-${process.pid}-${Date.now()}`;
    const standIn = await start({ admin: { unixSocket: name } });
    expect(standIn.adminAddress).toBe(`unix:${name}`);
    expect(parseAddress(standIn.adminAddress).path?.startsWith('\0')).toBe(true);
    expect(await adminRequest(standIn.adminAddress, 'GET', '/ready')).toMatchObject({ status: 200 });
  });

  it('serves admin over IPv6 loopback, written [::1]:PORT', async () => {
    const standIn = await start({ admin: { host: '::1' } });
    expect(standIn.adminAddress).toMatch(/^\[::1\]:\d+$/);
    expect(await adminRequest(standIn.adminAddress, 'GET', '/ready')).toMatchObject({ status: 200 });
  });
});

describe('admin faults', () => {
  it('status: every endpoint answers that status, and the call is still logged', async () => {
    const standIn = await start();
    void standIn.setAdminFault({ kind: 'status', status: 500 });
    for (const [method, target] of [['GET', '/ready'], ['GET', '/stats?format=json'], ['POST', '/drain_listeners?graceful']] as const) {
      expect((await adminRequest(standIn.adminAddress, method, target)).status).toBe(500);
    }
    expect(standIn.drainStartedAt).toBeUndefined();
    expect(standIn.calls).toHaveLength(3);
    await standIn.setAdminFault(undefined);
    expect((await adminRequest(standIn.adminAddress, 'GET', '/ready')).status).toBe(200);
  });

  it('hang: the request is accepted and never answered', async () => {
    const standIn = await start();
    await standIn.setAdminFault({ kind: 'hang' });
    const client = await h1(parseAddress(standIn.adminAddress));
    let answered = false;
    void client.request('GET', '/ready').then(() => (answered = true), () => {});
    await vi.waitFor(() => expect(standIn.calls).toHaveLength(1));
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(answered).toBe(false);
    expect(client.isClosed).toBe(false);
  });

  it('garbage: 200 with a body that is not JSON', async () => {
    const standIn = await start();
    await standIn.setAdminFault({ kind: 'garbage' });
    const response = await adminRequest(standIn.adminAddress, 'GET', '/stats?format=json');
    expect(response.status).toBe(200);
    expect(() => JSON.parse(response.body) as unknown).toThrow();
  });

  it('refuse: connections are refused (kept-alive ones dropped) until the fault clears, on the same port', async () => {
    const standIn = await start();
    const address = standIn.adminAddress;
    const keptAlive = await h1(parseAddress(address));
    await standIn.setAdminFault({ kind: 'refuse' });
    await keptAlive.closed;
    await expect(adminRequest(address, 'GET', '/ready')).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    await standIn.setAdminFault(undefined);
    expect(standIn.adminAddress).toBe(address);
    expect(await adminRequest(address, 'GET', '/ready')).toMatchObject({ status: 200, body: 'LIVE\n' });
  });

  it('refuse on a Unix socket reopens at the same path', async () => {
    const dir = tempDir();
    const standIn = await start({ admin: { unixSocket: join(dir, 'admin.sock') } });
    await standIn.setAdminFault({ kind: 'refuse' });
    await expect(adminRequest(standIn.adminAddress, 'GET', '/ready')).rejects.toMatchObject({ code: expect.stringMatching(/ENOENT|ECONNREFUSED/) });
    await standIn.setAdminFault(undefined);
    expect(await adminRequest(standIn.adminAddress, 'GET', '/ready')).toMatchObject({ status: 200 });
  });
});
