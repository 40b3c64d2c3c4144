// The stand-in's admin API against the reference table (/work/shared/reference/envoy.md).
import { describe, expect, it } from 'vitest';
import { standInHarness } from './support/envoy/harness.js';
import { adminRequest, type RawResponse } from './support/envoy/http1-client.js';

const TEXT_PLAIN = 'text/plain; charset=UTF-8';
const { start } = standInHarness({ listeners: [{ name: 'ingress', kind: 'http' }] });

function expectAdminHeaders(response: RawResponse): void {
  expect(response.headers['cache-control']).toBe('no-cache, max-age=0');
  expect(response.headers['x-content-type-options']).toBe('nosniff');
}

describe('admin API: the reference table', () => {
  const FILTER = String.raw`^server\.total_connections$`;
  it.each([
    { method: 'POST', target: '/healthcheck/fail', status: 200, body: 'OK\n' },
    { method: 'POST', target: '/healthcheck/ok', status: 200, body: 'OK\n' },
    { method: 'POST', target: '/drain_listeners?graceful&skip_exit', status: 200, body: 'OK\n' },
    { method: 'POST', target: '/drain_listeners?skip_exit', status: 200, body: 'OK\n' }, // as Envoy 1.40 answers: no 400
    { method: 'POST', target: '/drain_listeners?inboundonly&graceful', status: 200, body: 'OK\n' },
    { method: 'POST', target: '/drain_listeners', status: 200, body: 'OK\n' },
    { method: 'GET', target: `/stats?filter=${FILTER}&format=json`, status: 200, body: '{"stats":[{"name":"server.total_connections","value":0}]}', type: 'application/json' },
    { method: 'GET', target: '/stats?filter=^no_such_stat$&format=json', status: 200, body: '{"stats":[]}', type: 'application/json' },
    { method: 'GET', target: '/stats?filter=(?=server)', status: 400, body: 'Invalid re2 regex' },
    { method: 'GET', target: '/stats?type=Bogus', status: 400, body: 'invalid &type= param' },
    { method: 'GET', target: '/stats?type=counters', status: 400, body: 'invalid &type= param' },
    { method: 'GET', target: `/stats?format=prometheus&filter=${FILTER}`, status: 200, body: '# TYPE envoy_server_total_connections gauge\nenvoy_server_total_connections{} 0\n' },
    { method: 'GET', target: `/stats/prometheus?filter=${FILTER}`, status: 200, body: '# TYPE envoy_server_total_connections gauge\nenvoy_server_total_connections{} 0\n' },
    { method: 'GET', target: '/ready', status: 200, body: 'LIVE\n' },
    { method: 'POST', target: '/ready', status: 200, body: 'LIVE\n' },
    { method: 'GET', target: '/drain_listeners?graceful', status: 405, body: 'Method GET not allowed, POST required.' },
    { method: 'PUT', target: '/healthcheck/fail', status: 405, body: 'Method PUT not allowed, POST required.' },
    { method: 'DELETE', target: '/quitquitquit', status: 405, body: 'Method DELETE not allowed, POST required.' },
    { method: 'GET', target: `//stats?filter=${FILTER}&format=json`, status: 200, body: '{"stats":[{"name":"server.total_connections","value":0}]}', type: 'application/json' },
    { method: 'GET', target: '//ready', status: 200, body: 'LIVE\n' },
  ])('$method $target -> $status', async ({ method, target, status, body, type }) => {
    const standIn = await start();
    const response = await adminRequest(standIn.adminAddress, method, target);
    expect(response.status).toBe(status);
    expect(response.body).toBe(body);
    expect(response.headers['content-type']).toBe(type ?? TEXT_PLAIN);
    expectAdminHeaders(response);
  });

  it.each(['/nope', '/stats/', '/ready/', '/Ready', '/healthcheck', '/stats/prometheus/x'])('unknown path %s -> 404 with the help list', async (target) => {
    const standIn = await start();
    const response = await adminRequest(standIn.adminAddress, 'GET', target);
    expect(response.status).toBe(404);
    expect(response.body.startsWith('invalid path. admin commands are:\n')).toBe(true);
    expect(response.body).toContain('  /stats: ');
    expect(response.body).toContain('  /drain_listeners: ');
    expect(response.headers['content-type']).toBe(TEXT_PLAIN);
    expectAdminHeaders(response);
  });

  it('POST /quitquitquit answers OK, then shuts everything down', async () => {
    const standIn = await start();
    const quit = new Promise<void>((resolve) => standIn.on('quit', resolve));
    const response = await adminRequest(standIn.adminAddress, 'POST', '/quitquitquit');
    expect(response).toMatchObject({ status: 200, body: 'OK\n' });
    await quit;
    await expect(adminRequest(standIn.adminAddress, 'GET', '/ready')).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });
});

describe('admin API: parameters', () => {
  it.each([
    { target: '/drain_listeners?graceful=false', graceful: true },
    { target: '/drain_listeners?graceful=0&skip_exit=no', graceful: true },
    { target: '/drain_listeners?GRACEFUL', graceful: false },
    { target: '/drain_listeners?inboundonly', graceful: false },
  ])('a boolean is set by its presence: $target', async ({ target, graceful }) => {
    const standIn = await start();
    expect((await adminRequest(standIn.adminAddress, 'POST', target)).status).toBe(200);
    expect(standIn.drainStartedAt !== undefined).toBe(graceful);
  });

  const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
  it.each([
    { name: 'form body carries the params', target: '/drain_listeners', headers: FORM, body: 'skip_exit', status: 200, graceful: false },
    { name: 'form body with graceful', target: '/drain_listeners', headers: FORM, body: 'graceful&skip_exit', status: 200, graceful: true },
    { name: 'form body with values', target: '/drain_listeners', headers: FORM, body: 'graceful=1', status: 200, graceful: true },
    { name: 'a query string wins over the body', target: '/drain_listeners?inboundonly', headers: FORM, body: 'skip_exit', status: 200, graceful: false },
    { name: 'an empty query string lets the body in', target: '/drain_listeners?', headers: FORM, body: 'graceful', status: 200, graceful: true },
    { name: 'a body without the form content type is ignored', target: '/drain_listeners', headers: { 'content-type': 'text/plain' }, body: 'skip_exit', status: 200, graceful: false },
  ])('$name', async ({ target, headers, body, status, graceful }) => {
    const standIn = await start();
    const response = await adminRequest(standIn.adminAddress, 'POST', target, { headers, body });
    expect(response.status).toBe(status);
    expect(standIn.drainStartedAt !== undefined).toBe(graceful);
  });

  it('a GET /stats with a form body filters too', async () => {
    const standIn = await start();
    const response = await adminRequest(standIn.adminAddress, 'GET', '/stats', {
      headers: FORM,
      body: 'filter=%5Eserver%5C.live%24&format=json',
    });
    expect(response.body).toBe('{"stats":[{"name":"server.live","value":1}]}');
  });

  it('percent-encoded query values are decoded; a "+" stays a regex "+"', async () => {
    const standIn = await start();
    const encoded = await adminRequest(standIn.adminAddress, 'GET', `/stats?format=json&filter=${encodeURIComponent('^server\\.li+ve$')}`);
    const raw = await adminRequest(standIn.adminAddress, 'GET', '/stats?format=json&filter=^server\\.li+ve$');
    expect(encoded.body).toBe('{"stats":[{"name":"server.live","value":1}]}');
    expect(raw.body).toBe(encoded.body);
  });
});

describe('admin API: call log', () => {
  it('records every request in order, whatever its outcome', async () => {
    const standIn = await start();
    const seen: string[] = [];
    standIn.on('admin-call', (call) => seen.push(call.path));
    const before = Date.now();
    await adminRequest(standIn.adminAddress, 'GET', '/ready');
    await adminRequest(standIn.adminAddress, 'GET', '/nope?x=1');
    await adminRequest(standIn.adminAddress, 'GET', '/healthcheck/fail');
    await adminRequest(standIn.adminAddress, 'POST', '/drain_listeners?skip_exit');
    await adminRequest(standIn.adminAddress, 'GET', '//stats?filter=a&format=json');
    expect(standIn.calls.map(({ method, path, query }) => ({ method, path, query }))).toEqual([
      { method: 'GET', path: '/ready', query: '' },
      { method: 'GET', path: '/nope', query: 'x=1' },
      { method: 'GET', path: '/healthcheck/fail', query: '' },
      { method: 'POST', path: '/drain_listeners', query: 'skip_exit' },
      { method: 'GET', path: '//stats', query: 'filter=a&format=json' },
    ]);
    expect(seen).toEqual(standIn.calls.map((call) => call.path));
    for (const call of standIn.calls) expect(call.time).toBeGreaterThanOrEqual(before);
  });
});

describe('server state, /ready and /server_info', () => {
  it.each([
    { initialState: 'PRE_INITIALIZING', status: 503, gauge: 2 },
    { initialState: 'INITIALIZING', status: 503, gauge: 3 },
    { initialState: 'LIVE', status: 200, gauge: 0 },
  ] as const)('/ready while $initialState', async ({ initialState, status, gauge }) => {
    const standIn = await start({ initialState });
    const response = await adminRequest(standIn.adminAddress, 'GET', '/ready');
    expect(response).toMatchObject({ status, body: `${initialState}\n` });
    expect(standIn.state).toBe(initialState);
    expect(standIn.stat('server.state')).toBe(gauge);
    expect(standIn.stat('server.live')).toBe(initialState === 'LIVE' ? 1 : 0);
  });

  it('/healthcheck/fail means DRAINING until /healthcheck/ok; /drain_listeners changes neither', async () => {
    const standIn = await start();
    const ready = async (): Promise<string> => (await adminRequest(standIn.adminAddress, 'GET', '/ready')).body;
    await adminRequest(standIn.adminAddress, 'POST', '/drain_listeners?graceful');
    expect(await ready()).toBe('LIVE\n');
    expect(standIn.state).toBe('LIVE');
    await adminRequest(standIn.adminAddress, 'POST', '/healthcheck/fail');
    expect(await adminRequest(standIn.adminAddress, 'GET', '/ready')).toMatchObject({ status: 503, body: 'DRAINING\n' });
    expect(standIn.state).toBe('DRAINING');
    expect(standIn.stat('server.live')).toBe(0);
    await adminRequest(standIn.adminAddress, 'POST', '/healthcheck/ok');
    expect(await ready()).toBe('LIVE\n');
    expect(standIn.stat('server.live')).toBe(1);
  });

  it('/server_info is pretty JSON with the fields a client reads', async () => {
    const standIn = await start({ drainStrategy: 'immediate', drainTimeSeconds: 30, workers: 3, version: '1.31.4' });
    await adminRequest(standIn.adminAddress, 'POST', '/healthcheck/fail');
    const response = await adminRequest(standIn.adminAddress, 'GET', '/server_info');
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe('application/json');
    expectAdminHeaders(response);
    expect(response.body).toMatch(/^\{\n "version": "[0-9a-f]{40}\/1\.31\.4\/Clean\/RELEASE\/BoringSSL",\n/);
    const info = JSON.parse(response.body) as Record<string, unknown>;
    expect(info).toMatchObject({
      state: 'DRAINING',
      hot_restart_version: expect.any(String),
      command_line_options: { drain_time: '30s', drain_strategy: 'Immediate', concurrency: 3, base_id: '0', restart_epoch: 0 },
      uptime_current_epoch: expect.stringMatching(/^\d+s$/),
      uptime_all_epochs: expect.stringMatching(/^\d+s$/),
      node: { user_agent_name: 'envoy', user_agent_build_version: { version: { major_number: 1, minor_number: 31, patch: 4 } } },
    });
  });

  it('/server_info defaults: 600s, Gradual, LIVE', async () => {
    const standIn = await start();
    const info = JSON.parse((await adminRequest(standIn.adminAddress, 'GET', '/server_info')).body) as {
      state: string;
      version: string;
      command_line_options: Record<string, unknown>;
    };
    expect(info.state).toBe('LIVE');
    expect(info.version).toContain('/1.36.2/');
    expect(info.command_line_options).toMatchObject({ drain_time: '600s', drain_strategy: 'Gradual', concurrency: 2 });
  });

  it('setInitState moves PRE_INITIALIZING to LIVE', async () => {
    const standIn = await start({ initialState: 'PRE_INITIALIZING' });
    standIn.setInitState('LIVE');
    expect(await adminRequest(standIn.adminAddress, 'GET', '/ready')).toMatchObject({ status: 200, body: 'LIVE\n' });
  });

  it('/listeners lists the data-plane listeners', async () => {
    const standIn = await start();
    const response = await adminRequest(standIn.adminAddress, 'GET', '/listeners');
    expect(response.body).toBe(`ingress::127.0.0.1:${standIn.listenerPort('ingress')}\n`);
  });
});
