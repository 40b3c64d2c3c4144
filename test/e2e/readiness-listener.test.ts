// What the chart's readiness listener answers, on real Envoy with the chart's bootstrap: the checks
// load balancers send by default (HAProxy's `option httpchk` is `OPTIONS / HTTP/1.0` without a
// Host header; cloud balancers GET `/` or a set path over HTTP/1.1), kubelet's probes, and HTTP/2.
// Every readiness check turns 503 when the health check fails (the drain's first step); liveness
// stays 200.
import { connect } from 'node:http2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawRequest } from '../support/raw-http.js';
import { type ChartEnvoy, startChartEnvoy } from '../support/real-envoy/chart-envoy.js';
import { get } from '../support/real-envoy/process.js';

/** Requests as balancers and kubelet send them, byte for byte. */
const CHECKS: ReadonlyArray<{ name: string; request: string; version: string }> = [
  { name: "HAProxy's default: OPTIONS / over HTTP/1.0, no Host", request: 'OPTIONS / HTTP/1.0\r\n\r\n', version: 'HTTP/1.0' },
  { name: 'GET on the chart path over HTTP/1.0, no Host', request: 'GET /ready HTTP/1.0\r\n\r\n', version: 'HTTP/1.0' },
  { name: 'HEAD / over HTTP/1.0 with a Host', request: 'HEAD / HTTP/1.0\r\nHost: 10.0.0.7\r\n\r\n', version: 'HTTP/1.0' },
  { name: "a cloud balancer's GET / over HTTP/1.1", request: 'GET / HTTP/1.1\r\nHost: 10.0.0.7:19003\r\nConnection: close\r\n\r\n', version: 'HTTP/1.1' },
  {
    name: "kubelet's probe: GET /ready over HTTP/1.1",
    request: 'GET /ready HTTP/1.1\r\nHost: 10.0.0.7:19003\r\nUser-Agent: kube-probe/1.33\r\nConnection: close\r\n\r\n',
    version: 'HTTP/1.1',
  },
];

/** One GET over HTTP/2 with prior knowledge (h2c), as gRPC-style checkers send it. */
function http2Status(port: number, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const session = connect(`http://127.0.0.1:${port}`);
    session.once('error', reject);
    const stream = session.request({ ':path': path });
    stream.setTimeout(5_000, () => stream.close());
    stream.once('response', (headers) => resolve(Number(headers[':status'])));
    stream.once('error', reject);
    stream.once('close', () => session.close());
    stream.resume();
    stream.end();
  });
}

describe("the chart's readiness listener on real Envoy", () => {
  let envoy: ChartEnvoy;
  let port: number;
  beforeAll(async () => {
    envoy = await startChartEnvoy();
    const ready = envoy.ports.ready;
    if (ready === undefined) throw new Error(`no ready listener among ${Object.keys(envoy.ports).join(', ')}`);
    port = ready;
  });
  afterAll(() => envoy?.stop());

  it('answers every default check 200 in the version asked, and paths it does not know 404', async () => {
    for (const check of CHECKS) {
      const answer = await rawRequest(port, check.request);
      expect(answer.statusLine, check.name).toBe(`${check.version} 200 OK`);
    }
    expect(await http2Status(port, '/ready')).toBe(200);
    expect(await http2Status(port, '/')).toBe(200);
    expect((await rawRequest(port, 'GET /live HTTP/1.0\r\n\r\n')).status).toBe(200);
    expect((await rawRequest(port, 'GET /healthz HTTP/1.0\r\n\r\n')).status).toBe(404);
  });

  it('answers every readiness check 503 once the health check failed, and liveness still 200', async () => {
    expect((await get(envoy.adminAddress, '/healthcheck/fail', 'POST')).status).toBe(200);
    try {
      for (const check of CHECKS) {
        const answer = await rawRequest(port, check.request);
        expect(answer.statusLine, check.name).toBe(`${check.version} 503 Service Unavailable`);
      }
      expect(await http2Status(port, '/')).toBe(503);
      expect((await rawRequest(port, 'GET /live HTTP/1.0\r\n\r\n')).statusLine).toBe('HTTP/1.0 200 OK');
    } finally {
      await get(envoy.adminAddress, '/healthcheck/ok', 'POST');
    }
  });
});
