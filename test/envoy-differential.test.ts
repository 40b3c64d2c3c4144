// Keeps the Envoy stand-in honest: real Envoy and the stand-in, both started from the chart's
// bootstrap and flags, get the same admin requests in the same order (the manager's own requests,
// then its error cases), and must answer with the same status, content type and body shape.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IDENTITY, standInOptions } from './support/chart/bootstrap.js';
import { EnvoyStandIn } from './support/envoy/stand-in.js';
import { type ChartEnvoy, startChartEnvoy } from './support/real-envoy/chart-envoy.js';
import { get } from './support/real-envoy/process.js';

interface Answer {
  readonly status: number;
  readonly contentType: string;
  readonly shape: unknown;
}

/** Stats as the sorted names Envoy lists (values differ: the stand-in's are not the real ones). */
function statsShape(body: string): unknown {
  const parsed = JSON.parse(body) as { stats?: Array<{ name?: unknown; value?: unknown }> };
  return { stats: (parsed.stats ?? []).map((s) => `${String(s.name)}: ${typeof s.value}`).sort() };
}

/** The /server_info fields the code reads (`state`), and the types of the rest of the top level. */
function serverInfoShape(body: string): unknown {
  const parsed = JSON.parse(body) as Record<string, unknown>;
  return { state: parsed['state'], fields: Object.fromEntries(Object.entries(parsed).map(([k, v]) => [k, typeof v]).sort()) };
}

/** Text answers: the whole body when short, else its first line (a help list); RE2's own error text is left out. */
function textShape(body: string): unknown {
  const short = body.length <= 64 ? body : body.split('\n')[0];
  return short?.replace(/^(Invalid re2 regex): .*$/s, '$1');
}

async function ask(adminAddress: string, method: string, path: string): Promise<Answer> {
  const answer = await get(adminAddress, path, method);
  const contentType = String(answer.headers['content-type'] ?? '');
  const shape = path.startsWith('/stats') && answer.status === 200 && contentType.startsWith('application/json')
    ? statsShape(answer.body)
    : path.startsWith('/server_info') && answer.status === 200
      ? serverInfoShape(answer.body)
      : textShape(answer.body);
  return { status: answer.status, contentType, shape };
}

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

describe("admin answers: real Envoy and the stand-in, from the chart's bootstrap", () => {
  let real: ChartEnvoy;
  let standIn: EnvoyStandIn;
  const answers: Array<{ request: string; real: Answer; standIn: Answer }> = [];

  beforeAll(async () => {
    real = await startChartEnvoy();
    const ephemeral = { port: () => 0, path: IDENTITY.path };
    standIn = await EnvoyStandIn.start({ ...standInOptions(real.rendered.bootstrap, real.rendered.envoy.args ?? [], ephemeral), workers: 1 });
    for (const [method, path] of REQUESTS) {
      answers.push({ request: `${method} ${path}`, real: await ask(real.adminAddress, method, path), standIn: await ask(standIn.adminAddress, method, path) });
    }
  });
  afterAll(async () => {
    await standIn?.close();
    await real?.stop();
  });

  it.each(REQUESTS.map(([method, path], index) => [`${method} ${path}`, index] as const))('%s', (_request, index) => {
    const { real: fromEnvoy, standIn: fromStandIn } = answers[index] ?? {};
    expect(fromEnvoy).toBeDefined();
    expect(fromStandIn).toEqual(fromEnvoy);
  });
});
