// HAProxy's configuration (checked by the real haproxy -c), its `show stat` parsing and hey's
// summary parsing: the numbers the fleet tests assert on are read right.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseShowStat } from '../support/fleet/haproxy.js';
import { haproxyConfig } from '../support/fleet/haproxy-config.js';
import { parseHeyReport } from '../support/fleet/hey.js';

const CHECK = { intervalMs: 250, timeoutMs: 1_000, rise: 2, fall: 2 };

describe('haproxyConfig', () => {
  it.each(['health-check', 'endpoints'] as const)('%s: haproxy accepts it, with retries off and the checks only in health-check mode', (mode) => {
    const dir = mkdtempSync(join(tmpdir(), 'haproxy-config-'));
    try {
      const config = haproxyConfig({ mode, slots: 4, http1Port: 18080, http2Port: 18081, statsSocket: join(dir, 'admin.sock'), healthCheck: CHECK });
      writeFileSync(join(dir, 'haproxy.cfg'), config);
      const check = spawnSync('haproxy', ['-c', '-f', join(dir, 'haproxy.cfg')], { encoding: 'utf8' });
      expect(check.error, 'haproxy must be installed (test/setup/debian.mjs)').toBeUndefined();
      expect(check.status, check.stdout + check.stderr).toBe(0);
      expect(config).toContain('  retries 0\n');
      // Both backends name the slot to the application.
      expect(config.match(/http-send-name-header x-fleet-server\n/g)).toHaveLength(2);
      expect(config).not.toMatch(/redispatch|retry-on/);
      expect(config.includes('option httpchk\n')).toBe(mode === 'health-check');
      expect(config.includes('inter 250ms fastinter 250ms downinter 250ms fall 2 rise 2')).toBe(mode === 'health-check');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('haproxyConfig with a check path', () => {
  it('checks GET <path> over HTTP/1.1 with a Host header, and haproxy accepts it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'haproxy-config-'));
    try {
      const config = haproxyConfig({
        mode: 'health-check',
        slots: 2,
        http1Port: 18080,
        http2Port: 18081,
        statsSocket: join(dir, 'admin.sock'),
        healthCheck: { ...CHECK, path: '/ready' },
      });
      writeFileSync(join(dir, 'haproxy.cfg'), config);
      const check = spawnSync('haproxy', ['-c', '-f', join(dir, 'haproxy.cfg')], { encoding: 'utf8' });
      expect(check.status, check.stdout + check.stderr).toBe(0);
      expect(config).toContain('  http-check send meth GET uri /ready ver HTTP/1.1 hdr Host readiness\n');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('parseShowStat', () => {
  it('reads each row by its column name, empty fields as 0', () => {
    const csv = [
      '# pxname,svname,qcur,scur,stot,econ,eresp,wretr,wredis,status,hrsp_5xx,cli_abrt,srv_abrt,',
      'http1,FRONTEND,,,120,,,,,OPEN,3,,,',
      'pods_h1,pod0,0,0,40,1,2,0,0,UP,4,5,6,',
      '',
    ].join('\n');
    expect(parseShowStat(csv)).toEqual([
      { backend: 'http1', server: 'FRONTEND', status: 'OPEN', econ: 0, eresp: 0, wretr: 0, wredis: 0, hrsp5xx: 3, srvAbrt: 0, cliAbrt: 0, stot: 120 },
      { backend: 'pods_h1', server: 'pod0', status: 'UP', econ: 1, eresp: 2, wretr: 0, wredis: 0, hrsp5xx: 4, srvAbrt: 6, cliAbrt: 5, stot: 40 },
    ]);
  });

  it('fails on anything else', () => {
    expect(() => parseShowStat('Unknown command')).toThrow(/not a show stat answer/);
  });
});

describe('parseHeyReport', () => {
  it('counts every status and every error', () => {
    const text = [
      'Summary:',
      '  Total:\t2.0 secs',
      '',
      'Status code distribution:',
      '  [200]\t95 responses',
      '  [502]\t3 responses',
      '',
      'Error distribution:',
      '  [2]\tGet "http://127.0.0.1:1/": EOF',
      '  [1]\tGet "http://127.0.0.1:1/": read: connection reset by peer',
      '',
    ].join('\n');
    expect(parseHeyReport(text)).toEqual({
      statuses: { '200': 95, '502': 3 },
      errors: { 'Get "http://127.0.0.1:1/": EOF': 2, 'Get "http://127.0.0.1:1/": read: connection reset by peer': 1 },
      responses: 98,
      failed: 6,
    });
  });

  it('fails when hey printed no summary', () => {
    expect(() => parseHeyReport('')).toThrow(/no summary/);
  });
});
