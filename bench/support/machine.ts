// The machine a run happened on, for the head of RESULTS.md.

import { statSync } from 'node:fs';
import { cpus, loadavg, release, totalmem } from 'node:os';
import { EXECUTABLE, NODE, nodeVersion } from './processes.js';

export function describeMachine(): string[] {
  const cores = cpus();
  const gib = (totalmem() / 1024 ** 3).toFixed(1);
  const [one, five] = loadavg();
  return [
    `- CPU: ${cores[0]?.model ?? 'unknown'}, ${cores.length} cores (shared, noisy: compare ratios, not absolute figures)`,
    `- memory: ${gib} GiB; kernel: Linux ${release()}`,
    `- load average when the run started: ${one?.toFixed(2)} (1 min), ${five?.toFixed(2)} (5 min)`,
    `- Node running the bench: ${process.version}; Node for every child process and inside the executable: ${nodeVersion()} (\`${NODE.replace(`${process.cwd()}/`, '')}\`)`,
    `- executable: \`dist/envoy-shutdown-manager\`, ${(statSync(EXECUTABLE).size / 1024 ** 2).toFixed(1)} MiB, built by the \`npm run package\` step of this run`,
  ];
}
