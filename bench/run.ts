// `npm run bench`: runs every scenario in sequence and rewrites bench/RESULTS.md.
// `node scripts/run-ts.mjs bench/run.ts <scenario>…` runs only those, and replaces only their
// sections (the header, with the machine and the command of the last full run, is kept). Either
// way the figures README.md and the docs quote are then rewritten from the new results. Options
// after the names (`large-config --series clusters --sizes 10,100`) run part of a scenario: a
// quick check, printed, whose partial section never replaces a whole one in RESULTS.md.
import { performance } from 'node:perf_hooks';
import { rewriteQuotes } from '../scripts/figure-quotes.js';
import { adminLoad } from './admin-load.js';
import { arm64Emulated } from './arm64-emulated.js';
import { dependencies } from './dependencies.js';
import { executableSize } from './executable-size.js';
import { fleetFinalScrape } from './fleet-final-scrape.js';
import { fleetPeers } from './fleet-peers.js';
import { hostileWaiters } from './hostile-waiters.js';
import { idleConnections } from './idle-connections.js';
import { idleMemory } from './idle-memory.js';
import { imageSize } from './image-size.js';
import { largeConfig } from './large-config.js';
import { manyWaiters } from './many-waiters.js';
import { peers } from './peers.js';
import { podFootprint } from './pod-footprint.js';
import { quietPeriod } from './quiet-period.js';
import { releaseLatency } from './release-latency.js';
import { startup } from './startup.js';
import { progress, type Scenario } from './support/harness.js';
import { describeMachine } from './support/machine.js';
import { RESULTS_FILE, type Section, writeResults } from './support/results-file.js';

const SCENARIOS: readonly Scenario[] = [
  releaseLatency,
  idleMemory,
  manyWaiters,
  hostileWaiters,
  startup,
  adminLoad,
  quietPeriod,
  podFootprint,
  idleConnections,
  largeConfig,
  peers,
  fleetPeers,
  fleetFinalScrape,
  executableSize,
  arm64Emulated,
  imageSize,
  dependencies,
];

/** How a person would type this run again. */
function commandLine(args: readonly string[]): string {
  if (process.env.npm_lifecycle_event === 'bench') return args.length === 0 ? 'npm run bench' : `npm run bench -- ${args.join(' ')}`;
  return ['node scripts/run-ts.mjs bench/run.ts', ...args].join(' ');
}

/** The scenario names, and each `--name value` after them. */
function parseArgs(args: readonly string[]): { names: string[]; options: Record<string, string> } {
  const at = args.findIndex((arg) => arg.startsWith('--'));
  const names = at < 0 ? [...args] : args.slice(0, at);
  const options: Record<string, string> = {};
  for (let i = names.length; i < args.length; i += 2) {
    const [flag, value] = [args[i] ?? '', args[i + 1]];
    if (!flag.startsWith('--') || value === undefined)
      throw new Error(`options come in pairs after the scenario names (--series clusters): ${args.slice(names.length).join(' ')}`);
    options[flag.slice(2)] = value;
  }
  return { names, options };
}

async function main(): Promise<void> {
  const { names, options } = parseArgs(process.argv.slice(2));
  const unknown = names.filter((name) => !SCENARIOS.some((scenario) => scenario.name === name));
  if (unknown.length > 0) {
    console.error(`unknown scenario ${unknown.join(', ')}; one of: ${SCENARIOS.map((s) => s.name).join(', ')}`);
    process.exit(2);
  }
  const selected = names.length === 0 ? SCENARIOS : SCENARIOS.filter((scenario) => names.includes(scenario.name));
  const refused = selected.filter((scenario) => Object.keys(options).some((option) => !(scenario.options ?? []).includes(option)));
  if (refused.length > 0) {
    console.error(
      `${refused.map((scenario) => scenario.name).join(', ')} take${refused.length === 1 ? 's' : ''} none of the options ${Object.keys(options).join(', ')}; name only scenarios that do`,
    );
    process.exit(2);
  }
  const partial = Object.keys(options).length > 0;
  const command = commandLine(process.argv.slice(2));
  const startedAt = performance.now();
  const date = new Date().toISOString();
  const machine = describeMachine(); // before the load of the run itself

  const sections: Section[] = [];
  for (const scenario of selected) {
    progress(scenario.name, 'starting');
    const scenarioStart = performance.now();
    const body = await scenario.run(options);
    const seconds = ((performance.now() - scenarioStart) / 1000).toFixed(0);
    progress(scenario.name, `done in ${seconds} s`);
    const stamp = `_Measured ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC in ${seconds} s, by \`${command}\`._`;
    sections.push({ name: scenario.name, markdown: `## ${scenario.title}\n\n${stamp}\n\n${body}\n` });
  }

  const totalSeconds = ((performance.now() - startedAt) / 1000).toFixed(0);
  if (partial) {
    process.stdout.write(sections.map((section) => section.markdown).join('\n'));
    progress('bench', `part of ${names.join(', ')} in ${totalSeconds} s, printed above; ${RESULTS_FILE} left as it was`);
    return;
  }
  const header =
    names.length === 0
      ? [
          `Last full run: ${date.slice(0, 16).replace('T', ' ')} UTC, \`${command}\`, ${totalSeconds} s for the scenarios (plus the \`npm run package\` step before them).`,
          '',
          ...machine,
          '',
          'Every figure is a median over several runs with its spread; every comparison is a ratio against a baseline measured in the same run. Each section says how it was measured, and when; `node scripts/run-ts.mjs bench/run.ts <scenario>` re-runs one section (run `npm run package` first) and leaves the others as they are. See bench/README.md.',
        ].join('\n')
      : undefined;
  writeResults(
    'Benchmark results',
    header,
    sections,
    SCENARIOS.map((scenario) => scenario.name),
  );
  const quoting = rewriteQuotes();
  progress(
    'bench',
    `${RESULTS_FILE} written; ${totalSeconds} s in all; quoted figures ${quoting.length === 0 ? 'unchanged' : `rewritten in ${quoting.join(', ')}`}`,
  );
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
