// GET /metrics on the built manager, read by Prometheus' own text-format parser, after real
// drains of real Envoy released the manager's waiters.
import { afterEach, describe, expect, it } from 'vitest';
import type { LogLine } from '../support/cli.js';
import { metricsOf, type ObservedDrain, startObservedDrain } from '../support/observed-drain.js';
import { parsePrometheusText, sampleValue } from '../support/prometheus.js';
import { request } from '../support/protocols/clients.js';

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
const defer = (cleanup: () => unknown): void => void cleanups.push(cleanup);

describe('/metrics', () => {
  it('counts handshakes, releases and drains by result, and keeps the last drain, as the parser reads them', async () => {
    const observed = await startObservedDrain(defer);
    const before = await parsePrometheusText((await metricsOf(observed)).body);
    expect(sampleValue(before, 'envoy_shutdown_manager_drains_total', { result: 'drained' })).toBe(0);
    expect(sampleValue(before, 'envoy_shutdown_manager_last_drain_duration_seconds')).toBeUndefined();

    // A drain held to its timeout by an idle connection...
    const first = await observed.drain('timeout');
    expect(first.hook.code).toBe(3);
    const afterFirst = await parsePrometheusText((await metricsOf(observed)).body);
    const report = JSON.parse(first.prestop.body) as { elapsedMs: number };
    expect(sampleValue(afterFirst, 'envoy_shutdown_manager_drains_total', { result: 'timeout' })).toBe(1);
    expect(sampleValue(afterFirst, 'envoy_shutdown_manager_last_drain_duration_seconds')).toBe(report.elapsedMs / 1000);
    expect(sampleValue(afterFirst, 'envoy_shutdown_manager_last_drain_connections')).toBe(1);

    // ...then one that drains: counted apart, and now the last one.
    const second = await observed.drain('drained');
    expect(second.prestop.status).toBe(200);
    const families = await parsePrometheusText((await metricsOf(observed)).body);
    expect(sampleValue(families, 'envoy_shutdown_manager_drains_total', { result: 'drained' })).toBe(1);
    expect(sampleValue(families, 'envoy_shutdown_manager_drains_total', { result: 'timeout' })).toBe(1);
    expect(sampleValue(families, 'envoy_shutdown_manager_last_drain_connections')).toBe(0);
    expect(sampleValue(families, 'envoy_shutdown_manager_handshakes_total', { endpoint: 'ready', code: '200' })).toBe(2);
    expect(sampleValue(families, 'envoy_shutdown_manager_ready_file_releases_total')).toBe(2);
    expect(sampleValue(families, 'envoy_shutdown_manager_waiters')).toBe(0);
  });

  it('shows the waiters held now; is read-only; the other paths answer as before', async () => {
    const observed = await startObservedDrain(defer);
    const held = request({ port: observed.managerPort }, '/shutdown/ready');
    await observed.manager.waitForLog((line) => line.msg === 'waiting for the drain to finish');
    const scrape = await metricsOf(observed, 'GET', '/metrics?x=1');
    expect(scrape.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(sampleValue(await parsePrometheusText(scrape.body), 'envoy_shutdown_manager_waiters')).toBe(1);
    const answers = await Promise.all([
      metricsOf(observed, 'POST'),
      metricsOf(observed, 'HEAD'),
      metricsOf(observed, 'GET', '/metrics/'),
      metricsOf(observed, 'GET', '/shutdown'),
    ]);
    expect(answers.map((answer) => answer.status)).toEqual([405, 200, 404, 404]);
    expect(answers[0]?.headers.allow).toBe('GET, HEAD');
    // Scraping triggered nothing: the waiter is still held, no admin call was made.
    expect(observed.envoy.calls).toHaveLength(0);
    const stopped = observed.stop();
    expect((await held).status).toBe(500);
    expect((await stopped).code).toBe(0);
  });
});

describe('the final scrape (--final-scrape-timeout)', () => {
  const behind = (observed: ObservedDrain): Promise<LogLine> =>
    observed.manager.waitForLog((line) => line.msg === 'final scrape: serving /metrics until the final counters are read');

  it('after a pod-ending drain, serves /metrics alone until the scraper read the final counters, then exits', async () => {
    const observed = await startObservedDrain(defer, { args: ['--final-scrape-timeout', '60s'] });
    await metricsOf(observed); // a scraper, before the drain
    const { hook, prestop } = await observed.drain('timeout');
    expect([hook.code, prestop.status]).toEqual([3, 200]); // Envoy released before the manager's stop
    observed.manager.child.kill('SIGTERM');
    expect((await behind(observed)).scrapers).toBe(1);
    const others = await Promise.all([request({ port: observed.managerPort }, '/healthz'), request({ port: observed.managerPort }, '/shutdown/ready')]);
    expect(others.map((answer) => answer.status)).toEqual([503, 503]);
    // Still there: nothing has read the final counters yet.
    expect(observed.manager.child.exitCode).toBeNull();
    const final = await parsePrometheusText((await metricsOf(observed)).body);
    expect(sampleValue(final, 'envoy_shutdown_manager_drains_total', { result: 'timeout' })).toBe(1);
    const stopped = await observed.manager.result;
    expect(stopped.code).toBe(0);
    expect(stopped.logs.map((line) => line.msg)).toContain('final scrape: the final counters were read');
  });

  it('exits at once when nothing ever scraped it, or its scrapers already read the final counters', async () => {
    const args = ['--final-scrape-timeout', '60s'];
    const unscraped = await startObservedDrain(defer, { args });
    const scraped = await startObservedDrain(defer, { args });
    await Promise.all([unscraped.drain('drained'), scraped.drain('drained')]);
    await metricsOf(scraped);
    for (const observed of [unscraped, scraped]) {
      const stopped = await observed.stop();
      expect(stopped.code).toBe(0);
      expect(stopped.logs.filter((line) => line.msg.startsWith('final scrape'))).toEqual([]);
    }
  });

  it('ends the stay at its timeout, with a warning, when the scraper does not come back', async () => {
    const observed = await startObservedDrain(defer, { args: ['--final-scrape-timeout', '3s'] });
    await observed.drain('drained');
    // Scraped after the drain, moments before the stop (well within the 3 s that make it a scraper to
    // wait for), then the counters move again: a late preStop request, answered with the report at once.
    await metricsOf(observed);
    expect((await request({ port: observed.managerPort }, '/shutdown/ready')).status).toBe(200);
    const stopped = await observed.stop();
    expect(stopped.code).toBe(0);
    expect(stopped.logs.find((line) => line.msg === 'final scrape: not every scraper read the final counters in time')).toMatchObject({
      level: 'warn',
      scrapers: 1,
      behind: 1,
    });
  });
});
