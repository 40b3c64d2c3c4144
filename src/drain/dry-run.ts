// `shutdown --dry-run`: what a drain would do with the effective configuration, and where Envoy
// stands now. Reads only: nothing is sent to Envoy but GETs, and no file is left behind (the
// ready file directory gets the real run's own check, which creates and removes a probe file).

import { GRACEFUL_DRAIN_PATH, HEALTHCHECK_FAIL_PATH, withEnvoy } from '../envoy/envoy-control.js';
import { checkReadyFileDirectory } from '../handoff/ready-file.js';
import { formatDuration } from '../shared/duration.js';
import type { ExitCode } from '../shared/errors.js';
import type { OutputFormat } from '../shared/output-format.js';
import { formatStatus } from '../status/format.js';
import { gatherStatus, type StatusReport, statusExitCode } from '../status/status.js';
import { describeShutdownConfig, envoyConnection, type ShutdownConfig } from './drain-config.js';

/** Where each option's value came from: `flag`, `env NAME` or `default`. */
export type OptionSources = Readonly<Record<string, string>>;

interface DryRunReport {
  readonly dryRun: true;
  readonly options: Readonly<Record<string, { readonly value: unknown; readonly source: string }>>;
  readonly plan: readonly string[];
  readonly readyFileDirectoryWritable: boolean;
  readonly now: StatusReport;
}

export async function runDryRun(config: ShutdownConfig, sources: OptionSources, output: OutputFormat, signal: AbortSignal): Promise<ExitCode> {
  const { report: now } = await withEnvoy(envoyConnection(config, true), 'if-available', (envoy) =>
    gatherStatus({ envoy, readyFile: config.readyFile, source: config.connections }, undefined, config.checkInterval, signal),
  );
  const described = describeShutdownConfig(config);
  const report: DryRunReport = {
    dryRun: true,
    options: Object.fromEntries(Object.entries(described).map(([key, value]) => [key, { value, source: sources[key] ?? 'default' }])),
    plan: plan(config),
    readyFileDirectoryWritable:
      config.readyFile === undefined ||
      (await checkReadyFileDirectory(config.readyFile).then(
        () => true,
        () => false,
      )),
    now,
  };
  process.stdout.write(output === 'json' ? `${JSON.stringify(report)}\n` : `${formatDryRun(report)}\n`);
  return statusExitCode(now);
}

function plan(config: ShutdownConfig): string[] {
  const counted =
    config.connections === 'total'
      ? 'server.total_connections (from a stats flush after the drain began, at least the live listener gauges)'
      : `live listener gauges${config.ignoreListener.length > 0 ? ` without ${config.ignoreListener.join(', ')}` : ''}`;
  const idle = config.ignoreIdleConnections ? ' or request, then counting only connections with a request in flight' : '';
  const quiet = config.quietPeriod > 0 ? ` and no new connection${idle} for ${formatDuration(config.quietPeriod)}` : '';
  const steps = [
    `POST ${GRACEFUL_DRAIN_PATH}`,
    `read ${counted} every ${formatDuration(config.checkInterval)}; finish once ${formatDuration(config.minDrainDuration)} have passed with at most ${config.exitAtConnections} connections${quiet}, or at ${formatDuration(config.drainTimeout)}`,
    config.readyFile === undefined ? "write no ready file: Envoy's SIGTERM follows this command's return" : `write ${config.readyFile}`,
  ];
  const failHealthCheck = `POST ${HEALTHCHECK_FAIL_PATH}`;
  if (config.healthCheckFailureDelay === 0) steps.unshift(failHealthCheck);
  else steps.splice(1, 0, `${failHealthCheck} after ${formatDuration(config.healthCheckFailureDelay)}, unless the drain is over`);
  return steps;
}

function formatDryRun(report: DryRunReport): string {
  const options = Object.entries(report.options).map(
    ([key, { value, source }]) => `  ${key.padEnd(24)} ${String(Array.isArray(value) ? value.join(',') || '-' : value).padEnd(28)} ${source}`,
  );
  const steps = report.plan.map((step, index) => `  ${index + 1}. ${step}`);
  const writable = report.readyFileDirectoryWritable ? '' : '\nwarning: the ready file directory is not writable: a real run would exit 2';
  return (
    [
      'dry run: nothing is sent to Envoy but reads, and no ready file is written (the writability check leaves none behind)',
      '',
      'options',
      ...options,
      '',
      'would',
      ...steps,
      '',
      'now',
      ...formatStatus(report.now)
        .split('\n')
        .map((line) => `  ${line}`),
    ].join('\n') + writable
  );
}
