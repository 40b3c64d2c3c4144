// The table of `status`'s options: where `status` reads what `shutdown` or the manager reads, the
// option is their own row, so all take the same variable.
import { MANAGER_SETTINGS } from '../manager/manager-settings.js';
import type { OptionSpec, OptionValues } from '../shared/option-spec.js';
import { STATUS_SETTINGS } from '../status/status-config.js';
import { SHUTDOWN_OPTIONS } from './shutdown-options.js';

const SHUTDOWN = SHUTDOWN_OPTIONS;

export const STATUS_OPTIONS = {
  adminAddress: SHUTDOWN.adminAddress,
  readyFile: {
    // A path is required here, as for the manager: "" (no ready file) is the drain's alone.
    ...MANAGER_SETTINGS.readyFile,
    help: 'the ready file: how the last drain ended, and where the drain-in-progress file lives',
  },
  connections: SHUTDOWN.connections,
  ignoreListener: {
    ...SHUTDOWN.ignoreListener,
    help: 'never count this listener (its stat prefix, exact), in --connections listeners and in new connections (--quiet-period, status); repeatable, comma-separated in the env var',
  },
  adminTimeout: SHUTDOWN.adminTimeout,
  interval: STATUS_SETTINGS.interval,
  output: { ...SHUTDOWN.output, help: 'text for people, json for scripts (one object per line)' },
  watch: { flags: '--watch', kind: 'plain', help: 'refresh every interval until interrupted' },
} as const satisfies Readonly<Record<string, OptionSpec>>;

/** What a parse of `status`'s command line hands its action. */
export type StatusValues = OptionValues<typeof STATUS_OPTIONS>;
