// The README is the user's manual: every flag and environment variable the CLI has must be in
// it, and the test command it gives must be the one CI runs.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ENV } from '../../src/cli/config.js';
import { shutdownOptionsMarkdown } from '../../src/cli/shutdown-options.js';
import { runCli } from '../support/cli.js';

const README = readFileSync('README.md', 'utf8');
const SUBCOMMANDS = ['shutdown', 'shutdown-manager', 'status', 'install'];
const PROTOCOL_TESTS = ['test/e2e/protocols-http.test.ts', 'test/e2e/protocols-streams.test.ts'];

describe('README', () => {
  it.each(Object.values(ENV))('documents %s', (name) => {
    expect(README).toContain(name);
  });

  it("holds shutdown's options table exactly as its option table renders it", () => {
    const start = README.indexOf('| flag | default | environment variable | meaning |', README.indexOf('## `shutdown`'));
    expect(start).toBeGreaterThan(0);
    expect(README.slice(start, README.indexOf('\n\n', start))).toBe(shutdownOptionsMarkdown());
  });

  it.each(SUBCOMMANDS)('documents every flag of %s', async (subcommand) => {
    const help = await runCli([subcommand, '--help']);
    expect(help.code).toBe(0);
    const flags = [...help.stdout.matchAll(/^\s+(?:-\w, )?(--[a-z-]+)/gm)].map((match) => match[1]).filter((flag) => flag !== '--help');
    expect(flags.length).toBeGreaterThan(0);
    for (const flag of flags) expect(README, `${subcommand} ${flag}`).toContain(`\`${flag}`);
  });

  it('gives the commands a newcomer runs, and CI runs the same test command', () => {
    expect(README).toContain('npm ci && npm run demo');
    expect(README).toContain('npm ci && npm test');
    const ci = readFileSync('.ci/run', 'utf8');
    expect(ci).toMatch(/^npm test$/m);
    expect(ci).toMatch(/^if ! npm ci /m);
  });

  it("backs every row of the protocol table with a test on real Envoy, named by the row's first cell", () => {
    const start = README.indexOf('| protocol (test) |');
    expect(start).toBeGreaterThan(0);
    const rows = README.slice(start, README.indexOf('\n\n', start)).split('\n').slice(2);
    const tests = PROTOCOL_TESTS.flatMap((file) => [...readFileSync(file, 'utf8').matchAll(/^\s+it\('([^']+)'/gm)].map((match) => match[1] as string));
    expect(rows.length).toBe(tests.length);
    for (const row of rows) {
      const protocol = row.split('|')[1]?.trim() ?? '';
      expect(tests.filter((name) => name.startsWith(`${protocol}:`)), row).toHaveLength(1);
    }
  });

  it('documents every exit code the help texts list', async () => {
    for (const subcommand of ['shutdown', 'shutdown-manager']) {
      const help = await runCli([subcommand, '--help']);
      const codes = [...help.stdout.matchAll(/^\s{2}(\d{1,3})\s{2,}/gm)].map((match) => match[1]);
      expect(codes.length).toBeGreaterThan(2);
      for (const code of codes) expect(README).toMatch(new RegExp(`\\| ${code} \\||\\(${code} for|${code} \\(|^${code} `, 'm'));
    }
  });
});
