// Runs `status` once, or every interval with --watch until interrupted.

import { withEnvoy } from '../envoy/envoy-control.js';
import { ExitCode } from '../shared/errors.js';
import { formatStatus } from './format.js';
import { type Baseline, gatherStatus, statusExitCode } from './status.js';
import type { StatusConfig } from './status-config.js';

export async function runStatus(
  config: StatusConfig,
  signal: AbortSignal,
  write: (text: string) => void = (text) => process.stdout.write(text),
): Promise<ExitCode> {
  let exitCode: ExitCode = ExitCode.Success;
  try {
    // Requests are read too: the report says which connections carry one, and which manager serves which listener.
    await withEnvoy({ ...config, countRequests: true }, 'if-available', async (envoy) => {
      const from = { envoy, readyFile: config.readyFile, source: config.connections };
      let baseline: Baseline | undefined;
      do {
        const gathered = await gatherStatus(from, baseline, config.intervalMs, signal);
        baseline = gathered.baseline;
        // An unusable count is a failure too: the operator must not read the report as fine.
        exitCode = statusExitCode(gathered.report);
        write(config.output === 'json' ? `${JSON.stringify(gathered.report)}\n` : `${formatStatus(gathered.report)}\n${config.watch ? '\n' : ''}`);
        if (config.watch) await sleepUnlessAborted(config.intervalMs, signal);
      } while (config.watch && !signal.aborted);
    });
  } catch (error) {
    if (!signal.aborted) throw error;
  }
  // --watch ends by interruption, which is how a person stops it: not a failure.
  if (config.watch) return ExitCode.Success;
  return exitCode;
}

function sleepUnlessAborted(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
  });
}
