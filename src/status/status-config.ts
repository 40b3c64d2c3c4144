// The `status` configuration.
import type { AdminAddress } from '../envoy/address.js';
import type { ConnectionSource } from '../envoy/envoy-control.js';
import type { OptionSpec } from '../shared/option-spec.js';
import { parsePositiveDuration } from '../shared/parsers.js';

/** `status`'s own setting; the others (admin address, ready file, counting) are the drain's and the manager's. */
export const STATUS_SETTINGS = {
  interval: {
    flags: '--interval <duration>',
    kind: 'value',
    env: 'ENVOY_SHUTDOWN_STATUS_INTERVAL',
    fallback: '1s',
    parse: parsePositiveDuration,
    help: 'new connections are counted over this interval; with --watch, the refresh interval',
  },
} as const satisfies Readonly<Record<string, OptionSpec>>;

export interface StatusConfig {
  readonly adminAddress: AdminAddress;
  readonly readyFile: string;
  readonly connections: ConnectionSource;
  readonly ignoreListener: ReadonlySet<string>;
  readonly adminTimeoutMs: number;
  readonly intervalMs: number;
  readonly output: 'text' | 'json';
  readonly watch: boolean;
}

export interface StatusOptions {
  readonly adminAddress: AdminAddress;
  readonly readyFile: string;
  readonly connections: ConnectionSource;
  readonly ignoreListener: readonly string[];
  readonly adminTimeout: number;
  readonly interval: number;
  readonly output: 'text' | 'json';
  readonly watch?: boolean | undefined;
}

export function statusConfig(options: StatusOptions): StatusConfig {
  return {
    adminAddress: options.adminAddress,
    readyFile: options.readyFile,
    connections: options.connections,
    ignoreListener: new Set(options.ignoreListener),
    adminTimeoutMs: options.adminTimeout,
    intervalMs: options.interval,
    output: options.output,
    watch: options.watch === true,
  };
}
