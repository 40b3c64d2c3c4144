// The stand-in as a process (signals, quitquitquit) and its admin addresses.
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
