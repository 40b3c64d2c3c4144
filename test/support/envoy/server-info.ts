// GET /server_info: the ServerInfo proto as Envoy prints it (pretty JSON, one-space indent,
// durations as "600s", uint64 as strings, every primitive field present).
import { createHash } from 'node:crypto';
import type { DrainStrategy, ServerState } from './options.js';

export interface ServerInfoInput {
  version: string;
  state: ServerState;
  concurrency: number;
  drainTimeSeconds: number;
  drainStrategy: DrainStrategy;
  startedAt: number;
  now: number;
}

/** A stable fake git SHA per version, so the version string has Envoy's shape. */
export function revisionFor(version: string): string {
  return createHash('sha1').update(`envoy-stand-in/${version}`).digest('hex');
}

/** "<sha>/<version>/Clean/RELEASE/BoringSSL", as Envoy reports itself. */
export function fullVersion(version: string): string {
  return `${revisionFor(version)}/${version}/Clean/RELEASE/BoringSSL`;
}

/** Proto3 JSON durations carry 0, 3, 6 or 9 fractional digits. */
export function protoDuration(seconds: number): string {
  return Number.isInteger(seconds) ? `${seconds}s` : `${seconds.toFixed(3)}s`;
}

export function renderServerInfo(input: ServerInfoInput): string {
  const uptime = protoDuration(Math.floor((input.now - input.startedAt) / 1000));
  const [major = 0, minor = 0, patch = 0] = input.version.split('.').map((part) => parseInt(part, 10));
  const info = {
    version: fullVersion(input.version),
    state: input.state,
    hot_restart_version: '11.104',
    hot_restart_initializing: false,
    command_line_options: {
      base_id: '0',
      use_dynamic_base_id: false,
      skip_hot_restart_on_no_parent: false,
      skip_hot_restart_parent_stats: false,
      base_id_path: '',
      concurrency: input.concurrency,
      config_path: '/etc/envoy/envoy.yaml',
      config_yaml: '',
      allow_unknown_static_fields: false,
      reject_unknown_dynamic_fields: false,
      ignore_unknown_dynamic_fields: false,
      admin_address_path: '',
      local_address_ip_version: 'v4',
      log_level: 'info',
      component_log_level: '',
      log_format: '[%Y-%m-%d %T.%e][%t][%l][%n] [%g:%#] %v',
      log_format_escaped: false,
      log_path: '',
      service_cluster: '',
      service_node: '',
      service_zone: '',
      drain_strategy: input.drainStrategy === 'immediate' ? 'Immediate' : 'Gradual',
      file_flush_interval: '10s',
      drain_time: protoDuration(input.drainTimeSeconds),
      parent_shutdown_time: '900s',
      mode: 'Serve',
      disable_hot_restart: false,
      enable_mutex_tracing: false,
      restart_epoch: 0,
      cpuset_threads: false,
      disabled_extensions: [],
      enable_fine_grain_logging: false,
      socket_path: '@envoy_domain_socket',
      socket_mode: 0,
      enable_core_dump: false,
      stats_tag: [],
    },
    uptime_current_epoch: uptime,
    uptime_all_epochs: uptime,
    node: {
      id: 'envoy-stand-in',
      cluster: 'envoy-stand-in',
      metadata: {},
      user_agent_name: 'envoy',
      user_agent_build_version: {
        version: { major_number: major, minor_number: minor, patch },
        metadata: {
          'build.type': 'RELEASE',
          'revision.sha': revisionFor(input.version),
          'revision.status': 'Clean',
          'ssl.version': 'BoringSSL',
        },
      },
      extensions: [],
      client_features: [],
      listening_addresses: [],
    },
  };
  return `${JSON.stringify(info, null, 1)}\n`;
}
