// The documentation is the user's manual: every flag and environment variable the CLI has must be
// in the command reference, its options tables exactly as the option tables render them, and the
// test command the README gives must be the one CI runs.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { GENERATED_TABLES, generated, REFERENCE_PAGE, tableSpan } from '../../scripts/reference-tables.js';
import { ENV } from '../../src/cli/config.js';
import { runCli } from '../support/cli.js';

const README = readFileSync('README.md', 'utf8');
const REFERENCE = readFileSync(REFERENCE_PAGE, 'utf8');
const OPERATIONS = readFileSync('docs/operations.md', 'utf8');
const SUBCOMMANDS = ['shutdown', 'shutdown-manager', 'status', 'install'];
const PROTOCOL_TESTS = ['test/e2e/protocols-http.test.ts', 'test/e2e/protocols-streams.test.ts'];

describe('documentation', () => {
  it.each(Object.values(ENV))('the reference documents %s', (name) => {
    expect(REFERENCE).toContain(name);
  });

  it.each(GENERATED_TABLES.map(({ heading, table }) => [heading, table] as const))(
    'the reference holds the options table under %s exactly as its option table renders it',
    (heading, table) => {
      const span = tableSpan(REFERENCE, heading);
      expect(span, heading).toBeDefined();
      expect(REFERENCE.slice(span?.start, span?.end)).toBe(table);
    },
  );

  it('the reference is what `node scripts/run-ts.mjs scripts/reference.ts` writes', () => {
    expect(generated(REFERENCE) === REFERENCE, 'run node scripts/run-ts.mjs scripts/reference.ts').toBe(true);
  });

  it.each(SUBCOMMANDS)('the reference documents every flag of %s', async (subcommand) => {
    const help = await runCli([subcommand, '--help']);
    expect(help.code).toBe(0);
    const flags = [...help.stdout.matchAll(/^\s+(?:-\w, )?(--[a-z-]+)/gm)].map((match) => match[1]).filter((flag) => flag !== '--help');
    expect(flags.length).toBeGreaterThan(0);
    for (const flag of flags) expect(REFERENCE, `${subcommand} ${flag}`).toContain(`\`${flag}`);
  });

  it('the README gives the commands a newcomer runs, and CI runs the same test command', () => {
    expect(README).toContain('npm ci && npm run demo');
    expect(README).toContain('npm ci && npm test');
    const ci = readFileSync('.ci/run', 'utf8');
    expect(ci).toMatch(/^npm test$/m);
    expect(ci).toMatch(/^if ! npm ci /m);
  });

  it("the reference backs every row of the protocol table with a test on real Envoy, named by the row's first cell", () => {
    const start = REFERENCE.indexOf('| protocol (test) |');
    expect(start).toBeGreaterThan(0);
    const rows = REFERENCE.slice(start, REFERENCE.indexOf('\n\n', start)).split('\n').slice(2);
    const tests = PROTOCOL_TESTS.flatMap((file) => [...readFileSync(file, 'utf8').matchAll(/^\s+it\('([^']+)'/gm)].map((match) => match[1] as string));
    expect(rows.length).toBe(tests.length);
    for (const row of rows) {
      const protocol = row.split('|')[1]?.trim() ?? '';
      expect(
        tests.filter((name) => name.startsWith(`${protocol}:`)),
        row,
      ).toHaveLength(1);
    }
  });

  it.each([
    ['shutdown', OPERATIONS],
    ['shutdown-manager', REFERENCE],
  ])('lists every exit code the help text of %s lists, in its exit codes table', async (subcommand, page) => {
    const help = await runCli([subcommand, '--help']);
    const codes = [...help.stdout.matchAll(/^\s{2}(\d{1,3})\s{2,}/gm)].map((match) => Number(match[1]));
    expect(codes.length).toBeGreaterThan(2);
    const start = page.indexOf(`## Exit codes of \`${subcommand}\``);
    expect(start).toBeGreaterThan(0);
    const table = page.slice(start, page.indexOf('\n\n', page.indexOf('| code |', start)));
    expect([...table.matchAll(/^\| (\d+) \|/gm)].map((match) => Number(match[1]))).toEqual(codes);
  });
});
