// Keeps the fault injector honest. The admin tap stands in front of real Envoy in the tests, so:
// with no fault it must be invisible (the same requests, in the same order, straight to Envoy and
// through the tap, get the same status line, raw headers and body), and the answers it makes up
// (a 5xx, cut-off JSON, any other JSON answer) must look like the answers real Envoy's admin API
// gives of the same kind: status line, header names in Envoy's order, content type, body shape.
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AdminTap, startAdminTap } from '../support/real-envoy/admin-tap.js';
import { type ChartEnvoy, startChartEnvoy } from '../support/real-envoy/chart-envoy.js';

interface RawAnswer {
  readonly statusLine: string;
  /** Header lines as received, `date` without its value (it differs by the second). */
  readonly headers: readonly string[];
  readonly contentType: string;
  readonly body: string;
}

/** One request on its own connection, read raw; bounded in time. */
function ask(adminAddress: string, method: string, path: string): Promise<RawAnswer> {
  const match = /^\[?([^\]]+?)\]?:(\d+)$/.exec(adminAddress);
  if (match === null) throw new Error(`not a TCP admin address: ${adminAddress}`);
  return new Promise((resolve, reject) => {
    const req = request({ host: match[1], port: Number(match[2]), method, path, agent: false, timeout: 2_000 }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      res.on('end', () => {
        const headers: string[] = [];
        for (let i = 0; i < res.rawHeaders.length; i += 2) {
          const name = res.rawHeaders[i] as string;
          headers.push(name.toLowerCase() === 'date' ? name : `${name}: ${res.rawHeaders[i + 1]}`);
        }
        resolve({ statusLine: `${res.statusCode} ${res.statusMessage}`, headers, contentType: String(res.headers['content-type']), body });
      });
    });
    req.on('timeout', () => req.destroy(new Error(`${method} ${path}: no answer in 2 s`)));
    req.on('error', reject);
    req.end();
  });
}

/** /server_info's `uptime` and the like move between two reads: its state, and the types of its top-level fields. */
function serverInfoShape(body: string): unknown {
  const parsed = JSON.parse(body) as Record<string, unknown>;
  return {
    state: parsed.state,
    fields: Object.fromEntries(
      Object.entries(parsed)
        .map(([k, v]) => [k, typeof v])
        .sort(),
    ),
  };
}

/** Header names in order, without the hop-by-hop `connection` (Node's HTTP server places its own last). */
const names = (answer: RawAnswer): string[] => answer.headers.map((line) => line.split(':')[0]?.toLowerCase() ?? '').filter((name) => name !== 'connection');

/** The admin listener's own connection counters move with every request asked, tap's or not. */
const withoutAdminCounts = (body: string): string => body.replace(/("name":"listener\.admin\.[^"]*","value":)\d+/g, '$1N');

/** In order: each step may change what the next ones see (health check, drain). */
const REQUESTS: ReadonlyArray<readonly [method: string, path: string]> = [
  ['GET', '/ready'],
  ['GET', '/server_info'],
  ['GET', '/stats?filter=^server\\.total_connections$&format=json'],
  ['GET', '/stats?filter=^listener\\..*\\.downstream_cx_(active|total)$&format=json'],
  ['GET', '/stats?filter=^(server\\.total_connections|listener\\..*\\.downstream_cx_(active|total))$&format=json'],
  ['GET', '/stats?filter=^no\\.such\\.stat$&format=json'],
  ['GET', '/stats?filter=(&format=json'],
  ['GET', '/stats?filter=(?=server)'],
  ['GET', '/stats?format=xml'],
  ['GET', '/stats?type=Bogus'],
  ['GET', '/stats/prometheus?filter=^server\\.total_connections$'],
  ['GET', '/no_such_page'],
  ['GET', '/healthcheck/fail'],
  ['GET', '/drain_listeners?graceful&skip_exit'],
  ['POST', '/healthcheck/fail'],
  ['GET', '/ready'],
  ['GET', '/server_info'],
  ['POST', '/drain_listeners?graceful&skip_exit'],
  ['POST', '/drain_listeners?graceful&skip_exit'],
  ['GET', '/stats?filter=^server\\.total_connections$&format=json'],
  ['POST', '/healthcheck/ok'],
  ['GET', '/ready'],
  // Released Envoy once answered 400 here; 1.40 answers 200 (and stops its listeners at once).
  ['POST', '/drain_listeners?skip_exit'],
];

const STATS = '/stats?filter=^server\\.total_connections$&format=json';

describe("the admin tap in front of real Envoy, from the chart's bootstrap", () => {
  let envoy: ChartEnvoy;
  let tap: AdminTap;
  const answers: Array<{ direct: RawAnswer; tapped: RawAnswer }> = [];
  /** Real Envoy's own answers of each kind the tap makes up: a 5xx, and a JSON 200. */
  let envoy5xx: RawAnswer;
  let envoyJson: RawAnswer;

  beforeAll(async () => {
    envoy = await startChartEnvoy();
    tap = await startAdminTap(envoy.adminAddress);
    for (const [method, path] of REQUESTS) {
      const tapped = await ask(tap.adminAddress, method, path);
      answers.push({ tapped, direct: await ask(envoy.adminAddress, method, path) });
    }
    await ask(envoy.adminAddress, 'POST', '/healthcheck/fail');
    envoy5xx = await ask(envoy.adminAddress, 'GET', '/ready'); // health check failed: 503 DRAINING
    envoyJson = await ask(envoy.adminAddress, 'GET', STATS);
  });
  afterAll(async () => {
    await tap?.close();
    await envoy?.stop();
  });

  it.each(REQUESTS.map(([method, path], index) => [`${method} ${path}`, index] as const))('passes %s through untouched', (_request, index) => {
    const { direct, tapped } = answers[index] ?? {};
    expect(direct).toBeDefined();
    expect(tapped?.statusLine).toBe(direct?.statusLine);
    expect(tapped?.headers).toEqual(direct?.headers);
    if (REQUESTS[index]?.[1] === '/server_info' && direct?.statusLine.startsWith('200')) {
      expect(serverInfoShape(tapped?.body ?? '')).toEqual(serverInfoShape(direct.body));
    } else {
      expect(withoutAdminCounts(tapped?.body ?? '')).toBe(withoutAdminCounts(direct?.body ?? ''));
    }
    expect(tap.calls[index]).toMatchObject({ method: REQUESTS[index]?.[0], status: Number(direct?.statusLine.split(' ')[0]) });
  });

  it("answers a 'status' fault as Envoy answers its own 5xx: status line, headers, one line of text", async () => {
    expect(envoy5xx.statusLine).toBe('503 Service Unavailable');
    tap.setFault({ kind: 'status', status: 503 });
    const injected = await ask(tap.adminAddress, 'GET', STATS);
    tap.setFault(undefined);
    expect(injected.statusLine).toBe(envoy5xx.statusLine);
    expect(names(injected)).toEqual(names(envoy5xx));
    expect(injected.contentType).toBe(envoy5xx.contentType);
    expect(envoy5xx.body).toMatch(/^[^\n]+\n$/);
    expect(injected.body).toMatch(/^[^\n]+\n$/);
  });

  it("answers 'garbage' and 'answer' faults with the headers of Envoy's JSON answers", async () => {
    expect(envoyJson.statusLine).toBe('200 OK');
    expect(() => JSON.parse(envoyJson.body)).not.toThrow();
    tap.setFault({ kind: 'garbage' });
    const garbage = await ask(tap.adminAddress, 'GET', STATS);
    tap.setFault({ kind: 'answer', status: 200, body: '{"stats":[]}' });
    const answer = await ask(tap.adminAddress, 'GET', STATS);
    tap.setFault(undefined);
    for (const injected of [garbage, answer]) {
      expect(injected.statusLine).toBe(envoyJson.statusLine);
      expect(names(injected)).toEqual(names(envoyJson));
      expect(injected.contentType).toBe(envoyJson.contentType);
    }
    expect(() => JSON.parse(garbage.body)).toThrow();
    expect(answer.body).toBe('{"stats":[]}');
  });
});
