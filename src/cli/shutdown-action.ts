// What `shutdown` does once commander (program.ts) parsed its command line: the flag checks, the
// config, then the drain or the dry run.
import { environmentOnly, shutdownConfig } from '../drain/drain-config.js';
import type { OptionSources } from '../drain/dry-run.js';
import { processEnv } from '../shared/environment.js';
import { hookLogMirror } from '../shared/hook-log.js';
import { createLogger } from '../shared/log.js';
import { attributeOf, type OptionSpec, type ParsedCommand } from '../shared/option-spec.js';
import { onTerminationSignal } from '../shared/signals.js';
import { checkShutdownFlags } from './flag-checks.js';
import { SHUTDOWN_OPTIONS, type ShutdownValues } from './shutdown-options.js';

export type ParsedShutdown = ParsedCommand<ShutdownValues>;

export async function shutdownAction(parsed: ParsedShutdown): Promise<number> {
  const { options } = parsed;
  checkShutdownFlags(parsed.sourceOf, options, parsed.seen);
  const env = processEnv();
  const config = { ...shutdownConfig(options), ...environmentOnly(env) };
  const signal = interruptSignal();
  if (options.dryRun === true) {
    const { runDryRun } = await import('../drain/dry-run.js');
    return runDryRun(config, optionSources(parsed.sourceOf), options.output, signal);
  }
  const { runShutdown } = await import('../drain/shutdown-command.js');
  const log = createLogger({ level: parsed.logLevel, format: parsed.logFormat, mirrorPath: hookLogMirror(env) }).child({ component: 'shutdown' });
  return runShutdown(config, log, signal);
}

/** Aborted by the first SIGINT/SIGTERM; a second one exits at once. */
export function interruptSignal(): AbortSignal {
  const controller = new AbortController();
  onTerminationSignal(() => controller.abort());
  return controller.signal;
}

/** For --dry-run: where each option's value came from, keyed like the effective configuration. */
function optionSources(sourceOf: ParsedShutdown['sourceOf']): OptionSources {
  const sources: Record<string, string> = {};
  const specs: readonly OptionSpec[] = Object.values(SHUTDOWN_OPTIONS);
  // A negation shares the attribute of the option it negates, whose row names the variable.
  for (const spec of specs.filter(({ kind }) => kind !== 'negation')) {
    const key = attributeOf(spec.flags);
    const source = sourceOf(key);
    const described = source === 'cli' ? 'flag' : source === 'env' ? `env ${spec.env ?? ''}` : 'default';
    sources[key] = described;
  }
  return sources;
}
