// The one table of `shutdown`'s options: a flag and help for each of the drain's settings (their
// variables, defaults and parsers live with the drain, drain/drain-config.ts). Commander's wiring,
// --help, --dry-run's sources and docs/reference.md's options tables are all derived from
// it: adding an option is one setting there, one entry here, plus its behaviour.
import { DRAIN_SETTINGS } from '../drain/drain-config.js';
import { OUTPUT_FORMATS } from '../shared/output-format.js';
import type { OptionSpec, OptionValues } from './option-spec.js';

const S = DRAIN_SETTINGS;

export const SHUTDOWN_OPTIONS = {
  adminAddress: {
    flags: '--admin-address <addr>',
    kind: 'value',
    ...S.adminAddress,
    help: "Envoy's admin API: host:port, [v6]:port, http://host:port or unix:/path; loopback only",
    doc: "Envoy's admin API: `host:port`, `[v6]:port`, `http://host:port`, `unix:/path` (or a bare absolute path; `unix:@name` for the abstract namespace, which needs Node 24 as in the executable and image: Node 20 cannot reach it and gets a usage error). Loopback or a Unix socket only; `localhost` means `127.0.0.1`.",
  },
  drainTimeout: {
    flags: '--drain-timeout <duration>',
    kind: 'value',
    ...S.drainTimeout,
    help: "longest drain; keep it below the pod's terminationGracePeriodSeconds and the manager's --ready-timeout",
    doc: "Longest drain. Keep it below the manager's `--ready-timeout` and the pod's grace period.",
  },
  minDrainDuration: {
    flags: '--min-drain-duration <duration>',
    kind: 'value',
    ...S.minDrainDuration,
    help: 'never finish sooner, so load balancers stop sending new connections first',
  },
  exitAtConnections: {
    flags: '--exit-at-connections <n>',
    kind: 'value',
    ...S.exitAtConnections,
    help: 'finish once the count is at or under this',
  },
  checkInterval: {
    flags: '--check-interval <duration>',
    kind: 'value',
    ...S.checkInterval,
    help: 'read the count (and log progress) at least this often',
    doc: 'Read the count at least this often; one progress log line per interval.',
  },
  healthCheckFailureDelay: {
    flags: '--health-check-failure-delay <duration>',
    kind: 'value',
    ...S.healthCheckFailureDelay,
    help: 'above 0: start the drain first, fail the health check after this delay (skipped if the drain is over)',
    doc: 'Above 0: start the drain first and fail the health check after this delay, unless the drain is already over.',
  },
  quietPeriod: {
    flags: '--quiet-period <duration>',
    kind: 'value',
    ...S.quietPeriod,
    defaultDoc: '`0s` (off)',
    help: 'above 0: also wait until no new connection was accepted on the counted listeners for this long (0: off)',
    doc: 'Also wait until no new connection was accepted on the counted listeners for this long. See below.',
  },
  ignoreIdleConnections: {
    flags: '--ignore-idle-connections',
    kind: 'switch',
    ...S.ignoreIdleConnections,
    help: 'with --quiet-period: once the drain may end and no request arrived for the quiet period, count only connections with a request in flight',
    doc: 'Needs `--quiet-period`. Once the drain may end and no request arrived for the quiet period, count only connections with a request in flight: idle keep-alive connections no longer hold the drain. See below; the chart turns it on.',
  },
  readyFile: {
    flags: '--ready-file <path>',
    kind: 'value',
    ...S.readyFile,
    help: `file written when the drain ends; the manager's /shutdown/ready waits for it ("": none)`,
    doc: 'Written when the drain ends; must be on a volume both containers share (an `emptyDir`). `""` means none. A file already there that is not a ready file this tool wrote (a directory, a device, a symlink, anything else) is refused, never replaced. File name at most 219 bytes.',
  },
  noReadyFile: {
    flags: '--no-ready-file',
    kind: 'negation',
    help: "sidecar-less mode (the hook runs in Envoy's own container): write no ready file; Envoy's SIGTERM follows this command's return",
    doc: "Sidecar-less mode: no ready file; Envoy's SIGTERM follows this command's return. Refused together with `--ready-file`.",
  },
  connections: {
    flags: '--connections <source>',
    kind: 'value',
    ...S.connections,
    help: 'total: server.total_connections; listeners: live listener gauges (faster, safer; see below)',
    doc: '`total` or `listeners`: where the count comes from (below).',
  },
  ignoreListener: {
    flags: '--ignore-listener <name>',
    kind: 'list',
    ...S.ignoreListener,
    defaultDoc: 'none',
    help: 'never count this listener (its stats name, exact), in --connections listeners and in new connections (--quiet-period, status); repeatable, comma-separated in the env var',
    doc: 'Never count this listener: its stats name (`listener.<name>.*`: its `stat_prefix`, else its address such as `0.0.0.0_10080`), matched exactly. Repeatable; comma-separated in the variable. With `total` it only leaves the listener out of the new connections a `--quiet-period` counts; with `total` and no quiet period it does nothing, so the flag is refused and the variable gets one warning line.',
  },
  adminTimeout: {
    flags: '--admin-timeout <duration>',
    kind: 'value',
    ...S.adminTimeout,
    help: 'bound on each admin API call',
    doc: 'Bound on each admin API call (its answer is also capped at 1 MiB).',
  },
  requireEnvoyPrestop: {
    flags: '--require-envoy-prestop',
    kind: 'switch',
    ...S.requireEnvoyPrestop,
    help: "for the sidecar's hook: drain only once Envoy's own preStop hook has reached the manager (the pod is terminating); otherwise exit 0 and leave Envoy serving",
    doc: "For the sidecar's hook: drain only once Envoy's own preStop hook has reached the manager (the pod is terminating); otherwise exit 0 and leave Envoy serving. See [Safety by design](design.md#safety-by-design).",
  },
  envoyPrestopWait: {
    flags: '--envoy-prestop-wait <duration>',
    kind: 'value',
    ...S.envoyPrestopWait,
    help: "with --require-envoy-prestop: how long to wait for Envoy's preStop hook to reach the manager",
    doc: 'How long the hook waits for the envoy-prestop record. As a flag, refused without `--require-envoy-prestop`.',
  },
  dryRun: {
    flags: '--dry-run',
    kind: 'plain',
    help: 'print the effective configuration, the plan and the current counts; change nothing',
    doc: 'Print the effective configuration (and where each value came from), the steps a drain would take and the current counts; change nothing.',
  },
  output: {
    flags: '--output <format>',
    kind: 'choice',
    fallback: 'text',
    choices: OUTPUT_FORMATS,
    help: 'with --dry-run: text for people, json for scripts',
    doc: 'Format of `--dry-run` (`text` or `json`); refused without it.',
  },
} as const satisfies Readonly<Record<string, OptionSpec>>;

export type ShutdownOptionName = keyof typeof SHUTDOWN_OPTIONS;

/** What a parse of `shutdown`'s command line hands its action. */
export type ShutdownValues = OptionValues<typeof SHUTDOWN_OPTIONS>;

/** An options table of docs/reference.md, row by row as the page holds it. */
export function optionsMarkdown(options: readonly OptionSpec[]): string {
  const cell = (text: string): string => text.replace(/\|/g, '\\|');
  const rows = options.map((option) => {
    const defaultCell = option.defaultDoc ?? (option.fallback !== undefined ? `\`${option.fallback}\`` : option.kind === 'switch' ? 'off' : '');
    const env = option.env === undefined ? '' : `\`${option.env}\``;
    const doc = option.doc ?? `${option.help.charAt(0).toUpperCase()}${option.help.slice(1)}.`;
    return `| \`${cell(option.flags)}\` | ${cell(defaultCell)} | ${env} | ${cell(doc)} |`;
  });
  return ['| flag | default | environment variable | meaning |', '|---|---|---|---|', ...rows].join('\n');
}

/** The options table of `shutdown` in docs/reference.md. */
export function shutdownOptionsMarkdown(): string {
  return optionsMarkdown(Object.values(SHUTDOWN_OPTIONS));
}
