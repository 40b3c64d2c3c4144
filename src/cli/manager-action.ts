// What `shutdown-manager` does once commander (program.ts) parsed its command line: the config, the
// logger, then the manager until a signal.

import type { ManagerOptions } from '../manager/manager-settings.js';
import { processEnv } from '../shared/environment.js';
import { createLogger } from '../shared/log.js';
import type { ParsedCommand } from '../shared/option-spec.js';
import { onTerminationSignal } from '../shared/signals.js';

export async function managerAction(parsed: ParsedCommand<ManagerOptions>): Promise<number> {
  const [{ managerConfig }, { runManager }] = await Promise.all([import('../manager/manager-config.js'), import('../manager/manager-command.js')]);
  const config = managerConfig(parsed.options, processEnv());
  const log = createLogger({ level: parsed.logLevel, format: parsed.logFormat }).child({ component: 'manager' });
  const stop = new Promise<NodeJS.Signals>((resolve) => onTerminationSignal(resolve));
  return runManager(config, log, stop);
}
