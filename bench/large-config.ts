// Large configurations and many connections: what our drain costs Envoy, and itself, as a gateway
// grows. For 10 → 20,000 TLS filter chains (Envoy Gateway's chain shape), 1 → 1,000 listeners,
// 10 → 10,000 clusters (EG's `http` listener, a route per backend), 10 → 5,000 virtual hosts
// (Contour's `ingress_http`) and 10 → 20,000 client connections, one real drain by the built
// executable at the chart's default timings at each size (bench/support/drain-at-size.ts): Envoy's
// CPU above its idle rate while it ran, beside as long a replay of each peer's own poll, the
// release after the last busy connection's close, Envoy's time per admin read and the bytes read,
// and the hook's CPU per read and peak memory, each as a ratio to the smallest size of its series
// in the same run. Then, at the two largest configurations, one drain each through ours and through
// both drop-ins in the drop-in test's sandboxed pod (bench/support/drop-ins-at-size.ts): whether
// each ended by itself, how soon, and at what cost.
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { HOOKS, type Hook } from '../test/support/dropin/large-config-pod.js';
import type { LargeConfigSize } from '../test/support/large-config/expand.js';
import { CONTOUR_ROUTES_PER_HOST } from '../test/support/large-config/routes.js';
import { envoyVersion } from '../test/support/real-envoy/binary.js';
import { CLOSE_AFTER_MS, type DrainCost, drainAtSize, HOOK_ARGS, type HookUsage, STATUS_ARGS, STATUS_READS, startupUsage } from './support/drain-at-size.js';
import { buildDropInRunner, type DropInDrain, drainThroughHook } from './support/drop-ins-at-size.js';
import { IDLE_WINDOW_MS, PEER_POLLS } from './support/envoy-share.js';
import { formatMiB, formatMs, openFilesHardLimit, progress, ratio, type Scenario, summarize, table, withScratch } from './support/harness.js';
import { describeMachine } from './support/machine.js';
import type { Workload } from './support/workloads.js';

/** The sizes bench/support/large-config-main.ts measures every admin endpoint at, by default. */
export const SIZES: readonly LargeConfigSize[] = [
  { listeners: 1, chainsPerListener: 10 },
  { listeners: 1, chainsPerListener: 1_000 },
  { listeners: 1, chainsPerListener: 5_000 },
  { listeners: 1, chainsPerListener: 20_000 },
  { listeners: 100, chainsPerListener: 3 },
  { listeners: 1_000, chainsPerListener: 3 },
];

/** The acceptance lines the table is read against: our drain's share of Envoy's CPU (and no more than Envoy Gateway's own poll's), the release at small and large sizes. */
const ENVOY_SHARE_LIMIT = 0.05;
const GROWTH_LIMIT = 2;
const SMALL_RELEASE_LIMIT_MS = 50;
const LARGE_RELEASE_LIMIT_MS = 1_000;
/** A drain through each drop-in must end by itself within this, both idle connections open and no scrape lost. */
const DROP_IN_DRAIN_LIMIT_MS = 4_000;
/**
 * Small sizes get this many drains (a fresh Envoy each), the larger ones one (Envoy takes 10+ s and
 * ~1 GB to start at 20,000 chains); each drain lasts the chart's 10 s minimum, and each peer's poll
 * is replayed as long after it.
 */
const SMALL_ROUNDS = 3;
/** Runs of `--version` that measure the executable's fixed CPU cost. */
const STARTUP_RUNS = 5;
/** Runs of one size that may fail (and are run again) before the size is given up. */
const MAX_FAILURES = 1;
/**
 * Idle client connections. Envoy needs a descriptor for each, and for its upstream connections
 * (up to its default 1,024 per cluster while the idle clients' first requests are in flight): the
 * largest size stays under a hard RLIMIT_NOFILE of 20,000, which only CAP_SYS_RESOURCE could raise.
 */
const CONNECTIONS = [10, 1_000, 10_000, Math.min(20_000, openFilesHardLimit() - 2_000)];

interface Size {
  readonly label: string;
  /** What the series counts (chains, clusters, …): how `--sizes` names the size. */
  readonly count: number;
  readonly workload: Workload;
  /** Up to 1,000 chains, 100 listeners, clusters or virtual hosts, 1,000 connections: SMALL_ROUNDS drains, and the small sizes' release limit. */
  readonly small: boolean;
}

interface Series {
  /** How `--series` names it. */
  readonly key: string;
  readonly title: string;
  readonly sizes: readonly Size[];
}

function sizes(counts: readonly number[], smallUpTo: number, label: (n: number) => string, workload: (n: number) => Workload): Size[] {
  return counts.map((count) => ({ label: label(count), count, workload: workload(count), small: count <= smallUpTo }));
}

const countOf = (n: number): string => n.toLocaleString('en');

const SERIES: readonly Series[] = [
  {
    key: 'chains',
    title: 'TLS filter chains on one HTTPS listener',
    sizes: sizes(
      [10, 1_000, 5_000, 20_000],
      1_000,
      (n) => `${countOf(n)} chains`,
      (n) => ({ kind: 'config', size: { listeners: 1, chainsPerListener: n } }),
    ),
  },
  {
    key: 'listeners',
    title: 'HTTPS listeners of 3 chains each',
    sizes: sizes(
      [1, 100, 1_000],
      100,
      (n) => `${countOf(n)} listener${n === 1 ? '' : 's'}`,
      (n) => ({ kind: 'config', size: { listeners: n, chainsPerListener: 3 } }),
    ),
  },
  {
    key: 'clusters',
    title: 'Envoy Gateway’s HTTP listener with a route and a cluster per backend',
    sizes: sizes(
      [10, 100, 1_000, 10_000],
      100,
      (n) => `${countOf(n)} clusters`,
      (n) => ({ kind: 'clusters', clusters: n }),
    ),
  },
  {
    key: 'virtual-hosts',
    title: `Contour’s \`ingress_http\` with many virtual hosts, ${CONTOUR_ROUTES_PER_HOST} routes each`,
    sizes: sizes(
      [10, 100, 1_000, 5_000],
      100,
      (n) => `${countOf(n)} virtual hosts`,
      (n) => ({ kind: 'virtual-hosts', hosts: n }),
    ),
  },
  {
    key: 'connections',
    title: 'idle pooled client connections (h2load)',
    sizes: sizes(
      CONNECTIONS,
      1_000,
      (n) => `${countOf(n)} connections`,
      (n) => ({ kind: 'connections', idle: n }),
    ),
  },
];

/** The series and sizes `--series a,b` and `--sizes 10,100` leave (all of them without either). */
function selected(options: Readonly<Record<string, string>>): Series[] {
  const list = (name: string): string[] | undefined => options[name]?.split(',').map((item) => item.trim());
  const keys = list('series');
  const counts = list('sizes')?.map(Number);
  const unknown = keys?.filter((key) => !SERIES.some((series) => series.key === key)) ?? [];
  if (unknown.length > 0 || counts?.some((count) => !Number.isInteger(count)) === true)
    throw new Error(`--series takes ${SERIES.map((series) => series.key).join(', ')} and --sizes whole counts: got ${JSON.stringify(options)}`);
  return SERIES.filter((series) => keys?.includes(series.key) ?? true)
    .map((series) => ({ ...series, sizes: series.sizes.filter((size) => counts?.includes(size.count) ?? true) }))
    .filter((series) => series.sizes.length > 0);
}

/** The drop-ins' drains: the two largest configurations, one run per hook (Envoy takes up to a minute and 1 GB to load 20,000 chains). */
const DROP_IN_SIZES: ReadonlyArray<{ readonly label: string; readonly size: LargeConfigSize }> = [
  { label: '20,000 chains', size: { listeners: 1, chainsPerListener: 20_000 } },
  { label: '1,000 listeners', size: { listeners: 1_000, chainsPerListener: 3 } },
];
const DROP_IN_HOOKS: readonly Hook[] = ['ours', 'envoy-gateway', 'contour'];
const HOOK_TITLE: Record<Hook, string> = { ours: 'ours (`shutdown`)', 'envoy-gateway': 'Envoy Gateway’s drop-in', contour: 'Contour’s drop-in' };

type Measure =
  | 'envoyCpu'
  | 'bytes'
  | 'gets'
  | 'calls'
  | 'drainMs'
  | 'ourShare'
  | 'egShare'
  | 'contourShare'
  | 'egReads'
  | 'contourReads'
  | 'idleCpu'
  | 'lost'
  | 'releaseMs'
  | 'hookCpu'
  | 'hookCpuPerCall'
  | 'statusCpuPerRead'
  | 'statusPeakKiB'
  | 'hookPeakKiB'
  | 'load'
  | 'envoyReadyMs'
  | 'envoyRssMiB';

interface Row {
  readonly label: string;
  readonly small: boolean;
  readonly runs: number;
  readonly results: readonly string[];
  /** Medians over the runs. */
  readonly m: Readonly<Record<Measure, number>>;
}

function measures(cost: DrainCost, startupCpuMs: number): Record<Measure, number> {
  return {
    envoyCpu: cost.envoyCpuMsPerRead,
    bytes: cost.bytesPerRead,
    gets: cost.gets,
    calls: cost.calls,
    drainMs: cost.drainMs,
    ourShare: cost.share.ours,
    egShare: cost.share.eg,
    contourShare: cost.share.contour,
    egReads: cost.peerReads.eg,
    contourReads: cost.peerReads.contour,
    idleCpu: cost.idleCpuMsPerS,
    lost: cost.lostRequests,
    releaseMs: cost.releaseMs,
    hookCpu: cost.hookCpuMs,
    hookCpuPerCall: cost.hookCpuMs / cost.calls,
    statusCpuPerRead: (cost.status.cpuMs - startupCpuMs) / cost.status.gets,
    statusPeakKiB: cost.status.peakKiB,
    hookPeakKiB: cost.hookPeakKiB,
    load: cost.load,
    envoyReadyMs: cost.envoyReadyMs,
    envoyRssMiB: cost.envoyRssMiB,
  };
}

async function measureSeries(series: Series, startupCpuMs: number): Promise<Row[]> {
  const rows: Row[] = [];
  for (const { label, workload, small } of series.sizes) {
    const costs: DrainCost[] = [];
    const failures: string[] = [];
    const rounds = small ? SMALL_ROUNDS : 1;
    for (let run = 0; run < rounds; run += 1) {
      const startedAt = performance.now();
      progress('large-config', `${label}: drain ${run + 1} of ${rounds} (load ${loadavg()[0]?.toFixed(1)})`);
      try {
        costs.push(await withScratch('large-config', (dir) => drainAtSize(workload, dir)));
        progress('large-config', `${label}: drain ${run + 1} took ${formatMs(performance.now() - startedAt)} in all`);
      } catch (error) {
        // A failed run is shown in the table, and tried once more.
        failures.push((error as Error).message.split('\n')[0] ?? 'failed');
        progress('large-config', `${label}: ${failures.at(-1)}`);
        if (failures.length <= MAX_FAILURES) run -= 1;
      }
    }
    const all = costs.map((cost) => measures(cost, startupCpuMs));
    const keys = Object.keys(measures({ status: {}, share: {}, peerReads: {} } as DrainCost, 0)) as Measure[];
    const m = Object.fromEntries(keys.map((key) => [key, all.length === 0 ? Number.NaN : summarize(all.map((x) => x[key])).median])) as Record<Measure, number>;
    rows.push({ label, small, runs: costs.length, results: [...costs.map((cost) => cost.result), ...failures.map((failure) => `failed: ${failure}`)], m });
  }
  return rows;
}

const pct = (share: number): string => (Number.isFinite(share) ? `${(share * 100).toFixed(share < 0.01 ? 2 : 1)} %` : '—');
const bytes = (n: number): string =>
  !Number.isFinite(n) ? '—' : n >= 1024 * 1024 ? `${(n / 1024 / 1024).toFixed(2)} MiB` : n >= 1024 ? `${(n / 1024).toFixed(1)} KiB` : `${n.toFixed(0)} B`;

const releaseLimit = (row: Row): number => (row.small ? SMALL_RELEASE_LIMIT_MS : LARGE_RELEASE_LIMIT_MS);
const whole = (n: number): string => (Number.isFinite(n) ? n.toFixed(0) : '—');

function envoyTable(rows: readonly Row[]): string {
  const base = rows[0];
  return table(
    [
      'size',
      'drains',
      'Envoy ready after, RSS',
      'Envoy idle CPU',
      'Envoy CPU above idle: **our drain**',
      `${PEER_POLLS.eg.label}’s poll (reads)`,
      `${PEER_POLLS.contour.label}’s poll (reads)`,
      'drain ended after',
      'our reads (all admin calls)',
      'Envoy CPU per read of ours (replayed)',
      'bytes per read',
    ],
    rows.map((row) => [
      row.label,
      `${row.runs} (${[...new Set(row.results)].join(', ')})`,
      `${formatMs(row.m.envoyReadyMs)}, ${whole(row.m.envoyRssMiB)} MiB`,
      pct(row.m.idleCpu / 1_000),
      `**${pct(row.m.ourShare)}**`,
      `${pct(row.m.egShare)} (${whole(row.m.egReads)})`,
      `${pct(row.m.contourShare)} (${whole(row.m.contourReads)})`,
      formatMs(row.m.drainMs),
      `${whole(row.m.gets)} (${whole(row.m.calls)})`,
      `${formatMs(row.m.envoyCpu)} (${ratio(row.m.envoyCpu, base?.m.envoyCpu ?? Number.NaN)})`,
      `${bytes(row.m.bytes)} (${ratio(row.m.bytes, base?.m.bytes ?? Number.NaN)})`,
    ]),
  );
}

function hookTable(rows: readonly Row[]): string {
  const base = rows[0];
  return table(
    [
      'size',
      'release after the busy connection’s close (limit)',
      'requests lost',
      'hook CPU per drain',
      'per admin call, start-up included',
      'per read: `status --watch` above start-up',
      'hook peak RSS',
      '`status` peak RSS',
      'load (1 min)',
    ],
    rows.map((row) => [
      row.label,
      `${formatMs(row.m.releaseMs)} (${formatMs(releaseLimit(row))})`,
      whole(row.m.lost),
      `${formatMs(row.m.hookCpu)} (${ratio(row.m.hookCpu, base?.m.hookCpu ?? Number.NaN)})`,
      `${formatMs(row.m.hookCpuPerCall)} (${ratio(row.m.hookCpuPerCall, base?.m.hookCpuPerCall ?? Number.NaN)})`,
      `${formatMs(row.m.statusCpuPerRead)} (**${ratio(row.m.statusCpuPerRead, base?.m.statusCpuPerRead ?? Number.NaN)}**)`,
      `${formatMiB(row.m.hookPeakKiB)} (**${ratio(row.m.hookPeakKiB, base?.m.hookPeakKiB ?? Number.NaN)}**)`,
      `${formatMiB(row.m.statusPeakKiB)} (${ratio(row.m.statusPeakKiB, base?.m.statusPeakKiB ?? Number.NaN)})`,
      Number.isFinite(row.m.load) ? row.m.load.toFixed(1) : '—',
    ]),
  );
}

interface DropInRow {
  readonly hook: Hook;
  readonly label: string;
  readonly drain: DropInDrain | { readonly failed: string };
}

async function measureDropIns(): Promise<DropInRow[]> {
  await buildDropInRunner();
  const rows: DropInRow[] = [];
  for (const { label, size } of DROP_IN_SIZES) {
    for (const hook of DROP_IN_HOOKS) {
      progress(
        'large-config',
        `${label}: drain through ${hook === 'ours' ? 'our shutdown' : `${hook}'s drop-in`} in the sandboxed pod (load ${loadavg()[0]?.toFixed(1)})`,
      );
      try {
        rows.push({ hook, label, drain: await drainThroughHook(hook, size) });
      } catch (error) {
        // Shown in the table: one run per hook and size, no retry.
        rows.push({ hook, label, drain: { failed: (error as Error).message.split('\n')[0] ?? 'failed' } });
        progress('large-config', `${label}, ${hook}: ${(error as Error).message.split('\n')[0]}`);
      }
    }
  }
  return rows;
}

function dropInTable(rows: readonly DropInRow[]): string {
  return table(
    [
      'hook',
      'size',
      'result (exit code)',
      'drain ended after',
      'idle HTTP/1.1, HTTP/2 open at the release',
      'scrapes sent (not 200)',
      'stats reads (all GETs)',
      'bytes per read',
      'Envoy CPU per read',
      'share of Envoy’s main thread',
      'Envoy ready after',
    ],
    rows.map(({ hook, label, drain }) => {
      if ('failed' in drain) return [HOOK_TITLE[hook], label, `failed: ${drain.failed}`, '—', '—', '—', '—', '—', '—', '—', '—'];
      const perRead = drain.readCost?.cpuMs ?? Number.NaN;
      return [
        HOOK_TITLE[hook],
        label,
        `${drain.result} (${drain.exitCode ?? 'signal'})`,
        formatMs(drain.drainMs),
        drain.idlePoolOpen.length === 0 ? '—' : drain.idlePoolOpen.map((open) => (open ? 'open' : 'closed')).join(', '),
        `${countOf(drain.scrapesSent)} (${countOf(drain.scrapesLost)})`,
        `${countOf(drain.statsReads)} (${countOf(drain.gets)})`,
        bytes(drain.readCost?.bytes ?? Number.NaN),
        formatMs(perRead),
        `**${pct((perRead * drain.gets) / drain.drainMs)}**`,
        formatMs(drain.envoyStartMs),
      ];
    }),
  );
}

/** The drop-ins' acceptance line: every drain ended by itself within the limit, the idle pool open at its release, no scrape lost. */
function dropInVerdict(rows: readonly DropInRow[]): string {
  const short = (row: DropInRow): string => `${HOOK_TITLE[row.hook]} at ${row.label}`;
  const off = rows.flatMap((row) => {
    const { drain } = row;
    if ('failed' in drain) return [`${short(row)} failed`];
    const why = [
      ...(drain.result === 'drained' ? [] : [drain.result]),
      ...(drain.drainMs <= DROP_IN_DRAIN_LIMIT_MS ? [] : [`${formatMs(drain.drainMs)}`]),
      ...(drain.idlePoolOpen.length === 2 && drain.idlePoolOpen.every(Boolean) ? [] : ['idle pool closed before the release']),
      ...(drain.scrapesSent > 0 && drain.scrapesLost === 0 ? [] : [`${drain.scrapesLost} of ${drain.scrapesSent} scrapes not 200`]),
    ];
    return why.length === 0 ? [] : [`${short(row)}: ${why.join(', ')}`];
  });
  const shares = rows.flatMap(({ drain }) => ('failed' in drain || drain.readCost === undefined ? [] : [(drain.readCost.cpuMs * drain.gets) / drain.drainMs]));
  return [
    `- Through every hook at ${DROP_IN_SIZES.map((size) => size.label).join(' and ')} (drained by itself within ${formatMs(DROP_IN_DRAIN_LIMIT_MS)}, both idle connections open at the release, no scrape lost): ${off.length === 0 ? 'holds' : `not at ${off.join('; ')}`}.`,
    `- Envoy's main thread in those drains (limit ${pct(ENVOY_SHARE_LIMIT)}): at most ${pct(Math.max(...shares))}${shares.length === rows.length ? '' : `; not measured for ${rows.length - shares.length} of ${rows.length}`}.`,
  ].join('\n');
}

function dropInMethod(envoy: string): string {
  const command = (hook: Hook): string =>
    `\`${HOOKS[hook].hook.map((arg) => (arg.startsWith('/') && arg.includes('dist/') ? 'dist/envoy-shutdown-manager' : arg)).join(' ')}\``;
  return [
    `Real Envoy ${envoy} in the drop-in test's pod (test/support/dropin/large-config-pod.ts, test/support/dropin/pod.ts): a user, network and mount namespace with only a loopback interface and its own /tmp and /admin (test/support/sandbox.ts), so Envoy runs on the peer's own ports and admin address (Envoy Gateway: \`127.0.0.1:19000\`, \`--drain-strategy immediate --drain-time-s 60\`; Contour: \`/admin/admin.sock\`), \`--concurrency 1\`, and the single executable is linked as \`/bin/contour\` and \`envoy-gateway\` on PATH, as the image links it. Each peer's own HTTPS fixture (Envoy Gateway's chain shape as above; for Contour's drop-in, Contour's TLS virtual-host chain) grown to ${DROP_IN_SIZES.map((size) => size.label).join(' or ')} (3 chains each) as above, beside the peer's HTTP listener holding an idle HTTP/1.1 and an idle HTTP/2 (h2c) connection, each after one answered request, and the peer's stats listener with a scraper (\`GET /stats/prometheus\` on one keep-alive connection every 100 ms while the hook runs; the listener's cluster reaches the real admin API, not the tap in front of it, so no scrape is counted as the hook's read). Then the hook, as each controller renders it: ours ${command('ours')}; Envoy Gateway's ${command('envoy-gateway')}; Contour's ${command('contour')}. No busy request: the drain ends once only the idle pool is left. One drain per hook and size.`,
    '',
    `Result and "drain ended after": the hook's own "shutdown finished" log line (its \`result\` and \`elapsedMs\`; the drop-ins exit 0 whether drained or timed out, so the line says which). The idle connections: still open when the hook exited, right after it wrote its ready file. Stats reads: the hook's \`GET /stats\` and \`GET /stats/prometheus\`, counted by the pod's admin tap. Envoy CPU per read: once the hook exited, each distinct GET it made is replayed inside the pod straight to Envoy's admin API as above (test/support/real-envoy/read-cost.ts), weighted by how often the hook sent it; the share is that × the hook's GETs ÷ the drain's duration.`,
  ].join('\n');
}

/** The acceptance lines, read off the rows. */
function verdict(all: ReadonlyArray<{ series: Series; rows: readonly Row[] }>): string {
  const rows = all.flatMap((measured) => measured.rows);
  const listed = (off: readonly string[], holds: string): string => (off.length === 0 ? holds : off.join('; '));
  const missing = rows.filter((row) => !Number.isFinite(row.m.ourShare)).map((row) => row.label);
  const shareOff = rows
    .filter((row) => row.m.ourShare > ENVOY_SHARE_LIMIT || row.m.ourShare > row.m.egShare)
    .map((row) => `${row.label} ${pct(row.m.ourShare)} (Envoy Gateway's ${pct(row.m.egShare)})`);
  const releaseOff = rows.filter((row) => !(row.m.releaseMs <= releaseLimit(row))).map((row) => `${row.label} ${formatMs(row.m.releaseMs)}`);
  const notDrained = rows
    .filter((row) => row.runs === 0 || row.results.some((result) => result !== 'drained') || row.m.lost > 0)
    .map((row) => `${row.label} (${row.results.join(', ')}; ${whole(row.m.lost)} lost)`);
  const growth = (measure: Measure): string =>
    all
      .map(({ series, rows: seriesRows }) => `${series.title} ${ratio(seriesRows.at(-1)?.m[measure] ?? Number.NaN, seriesRows[0]?.m[measure] ?? Number.NaN)}`)
      .join('; ');
  return [
    `- Every drain ended by itself, with no request lost: ${listed(notDrained, 'holds')}.`,
    `- Envoy's CPU above idle during our drain, at most ${pct(ENVOY_SHARE_LIMIT)} of the drain and no more than Envoy Gateway's own poll at the same size: ${listed(shareOff, 'holds at every size measured')}${missing.length === 0 ? '' : `; not measured at ${missing.join(', ')}`}.`,
    `- Release after the busy connection's close, at most ${formatMs(SMALL_RELEASE_LIMIT_MS)} up to 1,000 chains, 100 listeners, clusters or virtual hosts and 1,000 connections, ${formatMs(LARGE_RELEASE_LIMIT_MS)} above: ${listed(releaseOff, 'holds at every size measured')}.`,
    `- The hook's CPU per read (\`status --watch\`, above start-up), largest size ÷ smallest (limit ${GROWTH_LIMIT}×): ${growth('statusCpuPerRead')}. The drain's own CPU per admin call, start-up included: ${growth('hookCpuPerCall')}; its whole CPU per drain: ${growth('hookCpu')}.`,
    `- The hook's peak RSS, largest size ÷ smallest (limit ${GROWTH_LIMIT}×): ${growth('hookPeakKiB')}.`,
  ].join('\n');
}

/** How the drains were set up and measured. */
function method(envoy: string, startup: HookUsage): string {
  return [
    `Real Envoy ${envoy} (\`--concurrency 1 --drain-strategy immediate --drain-time-s 60\`), started at each size from a peer's own fixture (test/fixtures/peers/) grown at run time, every cluster static on one loopback backend: Envoy Gateway's \`https\` case (\`egctl x translate\` output) grown to N TLS filter chains, one per hostname, each chain as EG generates it (connection manager, JSON access log, TLS from a file), on M listeners (test/support/large-config/expand.ts); its \`http\` case with N HTTPRoutes, each one rule matching \`/svc-<i>\` to its own cluster (EG makes a cluster per route rule backend), before the fixture's catch-all route; Contour's \`ingress\` case with N virtual hosts on \`ingress_http\` (its RDS route configuration, inlined), each with ${CONTOUR_ROUTES_PER_HOST} prefix routes to its own service's cluster (test/support/large-config/routes.ts; Contour's admin socket moved to a loopback port, outside its pod); and EG's \`http\` case as it is for the connection series, up to ${countOf(CONNECTIONS.at(-1) ?? 0)} connections: Envoy needs a file descriptor for each client connection and each upstream one, and this machine's hard limit on open files (${countOf(openFilesHardLimit())}) can only be raised with CAP_SYS_RESOURCE, which the bench does not have. At each size: two idle pooled connections (one request each, through the first chain, route or virtual host; the connection series instead holds N idle connections from h2load, Debian's nghttp2-client, half HTTP/1.1 keep-alive and half HTTP/2, each after one request), and a scraper's connection on the peer's stats listener (one \`GET /stats/prometheus\`, then kept alive and idle, as Prometheus leaves it between scrapes). Then Envoy is left alone for ${formatMs(IDLE_WINDOW_MS)} (its stats flush interval: one flush); then one busy request, through the last chain, route or virtual host, that the backend holds (sent only now: Envoy's default 15 s route timeout, which the fixtures keep, would end it); and the built executable runs \`dist/envoy-shutdown-manager shutdown ${HOOK_ARGS.join(' ')}\` (the chart's defaults), its admin API reached through a recording pass-through (test/support/real-envoy/admin-tap.ts), which counts every admin call it makes; ${formatMs(CLOSE_AFTER_MS)} after its \`POST /drain_listeners\`, past the minimum drain, the backend answers the busy request, whose client sent \`Connection: close\`, so Envoy closes that connection. Requests lost: the busy request, unless answered 200.`,
    '',
    `Envoy CPU above idle: Envoy's utime+stime (all threads, /proc/<envoy pid>/stat) from the hook's exec to its exit, less Envoy's idle rate (the window before) over as long, ÷ that time. Then each peer's own read, as its hook sends it at the commit test/fixtures/peers/README.md names, is replayed against the same (now drained) Envoy on a new connection, a read then the hook's sleep, for as long as our drain ran, and measured the same way: ${PEER_POLLS.eg.label}'s \`GET ${PEER_POLLS.eg.path}\` with ${formatMs(PEER_POLLS.eg.sleepMs)} between reads, ${PEER_POLLS.contour.label}'s \`GET ${PEER_POLLS.contour.path}\` (over its admin socket in its pod) with its default ${formatMs(PEER_POLLS.contour.sleepMs)} check interval. A clock tick is 10 ms of CPU, about 0.1 % of a drain: shares that small, or below zero, are noise. Drain ended after: the ready file's report. Release: from the busy connection's close, as its client saw it, to the ready file's mtime (below zero when the drain, counting requests in flight, ended as the response completed, before the client saw its connection close).`,
    '',
    `Per read of ours: after the replays, every distinct GET the hook sent is replayed straight to Envoy's admin API one call after another (after one warm-up: at least 10 calls, and until Envoy's CPU time has moved 100 ms, or 400 calls), weighted by how often the hook sent each GET. The hook runs under a \`python3\` wrapper whose \`wait4\` gives its utime+stime and peak RSS (ru_maxrss, the kernel's VmHWM) at exit; its CPU per admin call is that ÷ every admin call it made, start-up included; and since the larger sizes make fewer reads, the CPU per read is taken where the reads are as many at every size: after the drain, the same executable's \`status ${STATUS_ARGS.join(' ')}\` (the drain's reads as the drain makes them: one of every stat it reads, then ones of the stats that moved, each with Envoy's state), stopped with SIGINT after ${STATUS_READS} reads of the stats, runs 3 times through the tap, and its CPU less the executable's fixed cost (\`dist/envoy-shutdown-manager --version\` under the same wrapper, median of ${STARTUP_RUNS}: ${formatMs(startup.cpuMs)}, peak RSS ${formatMiB(startup.peakKiB)}) ÷ its GETs is the CPU per read (median of the 3). Small sizes (up to 1,000 chains, 100 listeners, clusters or virtual hosts, 1,000 connections): ${SMALL_ROUNDS} drains, each on a fresh Envoy, median; larger sizes: one drain. Ratios in parentheses are to the smallest size of the same series in this run; the bold figures are the headline acceptance line.`,
  ].join('\n');
}

export const largeConfig: Scenario = {
  name: 'large-config',
  title: 'Large gateways: what the drain costs Envoy and itself, by size',
  options: ['series', 'sizes'],
  async run(options = {}) {
    const series = selected(options);
    const loadAtStart = loadavg();
    const envoy = await envoyVersion();
    const startups = await withScratch('large-config', async (dir) => {
      const runs: HookUsage[] = [];
      for (let n = 0; n < STARTUP_RUNS; n += 1) runs.push(await startupUsage(dir));
      return runs;
    });
    const startup = { cpuMs: summarize(startups.map((u) => u.cpuMs)).median, peakKiB: summarize(startups.map((u) => u.peakKiB)).median };
    const measured: Array<{ series: Series; rows: Row[] }> = [];
    for (const each of series) measured.push({ series: each, rows: await measureSeries(each, startup.cpuMs) });
    // The drop-ins only in a whole run: a run of some series or sizes is a quick check.
    const dropIns = Object.keys(options).length === 0 ? await measureDropIns() : undefined;
    const loadAtEnd = loadavg();
    return [
      method(envoy, startup),
      '',
      `Machine: ${describeMachine()
        .map((line) => line.replace(/^- /, ''))
        .join(
          '; ',
        )}. Load average (1 min, 5 min) at the start of this section: ${loadAtStart[0]?.toFixed(2)}, ${loadAtStart[1]?.toFixed(2)}; at its end: ${loadAtEnd[0]?.toFixed(2)}, ${loadAtEnd[1]?.toFixed(2)}; other sessions shared the 2 cores, so absolute times are inflated and the ratios are what to read.`,
      '',
      ...measured.flatMap(({ series: each, rows }) => [`### ${each.title}`, '', envoyTable(rows), '', hookTable(rows), '']),
      verdict(measured),
      ...(dropIns === undefined
        ? []
        : ['', '### Through the drop-ins, at the largest sizes', '', dropInMethod(envoy), '', dropInTable(dropIns), '', dropInVerdict(dropIns)]),
      '',
      "Envoy's cost of every other admin endpoint by size (the config dump among them): `node scripts/run-ts.mjs bench/support/large-config-main.ts`.",
    ].join('\n');
  },
};
