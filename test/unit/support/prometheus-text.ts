// Envoy's /stats/prometheus answer for a list of stats, as Envoy writes it under its default tags,
// for fake admin APIs: written from what real Envoy 1.40 answers, independently of the parser.
export interface FakeStat {
  readonly name: string;
  readonly value: number;
  /** Whether the stat ever moved (what `usedonly` keeps); default: its value is not 0. */
  readonly used?: boolean;
}

const FORMS: ReadonlyArray<readonly [RegExp, (m: RegExpExecArray) => string]> = [
  [/^listener\.admin\.(.+)$/, (m) => `envoy_listener_admin_${m[1]?.replaceAll('.', '_')}{}`],
  [/^listener\.(.+)\.worker_(\d+)\.(downstream_cx_\w+)$/, (m) => `envoy_listener_worker_${m[3]}{envoy_worker_id="${m[2]}",envoy_listener_address="${m[1]}"}`],
  [/^listener\.(.+?)\.http\.(.+)\.downstream_rq_completed$/, (m) => `envoy_listener_http_downstream_rq_completed{envoy_http_conn_manager_prefix="${m[2]}",envoy_listener_address="${m[1]}"}`],
  [/^listener\.(.+)\.(downstream_cx_\w+)$/, (m) => `envoy_listener_${m[2]}{envoy_listener_address="${m[1]}"}`],
  [/^http\.(.+?)\.(downstream_\w+)$/, (m) => `envoy_http_${m[2]}{envoy_http_conn_manager_prefix="${m[1]}"}`],
  [/^([a-z_]+)\.([a-z_]+)$/, (m) => `envoy_${m[1]}_${m[2]}{}`],
];

export function prometheusText(stats: readonly FakeStat[], usedOnly = false): string {
  const lines: string[] = [];
  for (const stat of stats) {
    if (usedOnly && !(stat.used ?? stat.value !== 0)) continue;
    const form = FORMS.map(([pattern, write]) => {
      const match = pattern.exec(stat.name);
      return match === null ? undefined : write(match);
    }).find((series) => series !== undefined);
    if (form === undefined) throw new Error(`no Prometheus form for ${stat.name} in this fake`);
    lines.push(`${form} ${stat.value}`);
  }
  return `${lines.join('\n')}\n`;
}
