// Envoy Gateway's HTTPS listener grown to a large gateway's size (test/support/large-config/) loads
// in real Envoy 1.40: a thousand TLS filter chains, one per hostname, and a hundred listeners. A
// request with the last host's server name is served through its own chain; a name no chain has is
// refused; and Envoy publishes the per-listener HTTP statistics the drain pairs listeners by.
import { createServer, type Server } from 'node:http';
import { request } from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Bootstrap } from '../support/chart/bootstrap.js';
import { FIRST_EXTRA_PORT, hostname, type LargeConfigSize, largeBootstrap, onLoopback } from '../support/large-config/expand.js';
import { testCertificate } from '../support/peer-fixtures/certificate.js';
import { get, type RealEnvoy, startRealEnvoy } from '../support/real-envoy/process.js';

let backend: Server;
let backendPort = 0;

beforeAll(async () => {
  backend = createServer((_req, res) => res.end('backend\n'));
  await new Promise<void>((listening) => backend.listen(0, '127.0.0.1', listening));
  backendPort = (backend.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((closed) => backend.close(() => closed())));

async function startLarge(size: LargeConfigSize): Promise<RealEnvoy> {
  const env = { backend: { address: '127.0.0.1', port: backendPort }, certificate: testCertificate() };
  // The fixture is proto3 JSON as egctl printed it; the chart's Bootstrap type is only the loader's view of it.
  const bootstrap = onLoopback(largeBootstrap('envoy-gateway', size, env)) as unknown as Bootstrap;
  return startRealEnvoy({ bootstrap, readyTimeoutMs: 30_000 });
}

/** One HTTPS GET with this server name; the status, or the error when the handshake is refused. */
function httpsGet(port: number, serverName: string): Promise<number> {
  return new Promise((done, fail) => {
    const req = request(
      { host: '127.0.0.1', port, path: '/', servername: serverName, headers: { host: serverName }, rejectUnauthorized: false, agent: false, timeout: 5_000 },
      (res) => {
        res.resume().on('end', () => done(res.statusCode ?? 0));
      },
    );
    req.on('timeout', () => req.destroy(new Error('no answer in 5 s')));
    req.on('error', fail);
    req.end();
  });
}

/** The per-listener HTTP stat names Envoy published, `listener.<stat name>.http.<prefix>.downstream_rq_completed`. */
async function perListenerHttpNames(envoy: RealEnvoy): Promise<string[]> {
  const { status, body } = await get(envoy.adminAddress, `/stats?filter=${encodeURIComponent(String.raw`^listener\..*\.http\..*\.downstream_rq_completed$`)}`);
  expect(status).toBe(200);
  return body
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => line.split(':')[0] ?? '');
}

describe("Envoy Gateway's HTTPS listener at a large gateway's size, in real Envoy", () => {
  it('1,000 filter chains: loads, serves the last host through its own chain, refuses an unknown name', async () => {
    const envoy = await startLarge({ listeners: 1, chainsPerListener: 1_000 });
    try {
      const port = envoy.ports['default/eg/https'];
      expect(port).toBeDefined();
      expect(await httpsGet(port ?? 0, hostname(0, 999))).toBe(200);
      await expect(httpsGet(port ?? 0, 'unknown.example.test')).rejects.toThrow();
      expect(await perListenerHttpNames(envoy)).toContain('listener.0.0.0.0_10443.http.https-10443.downstream_rq_completed');
    } finally {
      await envoy.stop();
    }
  });

  it('100 listeners of 3 chains: every one bound, each with its own per-listener HTTP statistics', async () => {
    const envoy = await startLarge({ listeners: 100, chainsPerListener: 3 });
    try {
      const https = Object.entries(envoy.ports).filter(([name]) => name.startsWith('default/eg/https'));
      expect(https).toHaveLength(100);
      const names = await perListenerHttpNames(envoy);
      // Named after the peer's own port (the listener's stat prefix), whatever port it bound here.
      for (const [name] of https) {
        const port = name === 'default/eg/https' ? 10443 : Number(name.slice('default/eg/https-'.length));
        expect(names, name).toContain(`listener.0.0.0.0_${port}.http.https-${port}.downstream_rq_completed`);
      }
      expect(names.filter((n) => n.includes('.http.https-'))).toHaveLength(100);
      // The last listener, the 99th after the fixture's own, serves its last host.
      const last = envoy.ports[`default/eg/https-${FIRST_EXTRA_PORT + 98}`];
      expect(last).toBeDefined();
      expect(await httpsGet(last ?? 0, hostname(99, 2))).toBe(200);
    } finally {
      await envoy.stop();
    }
  });
});
