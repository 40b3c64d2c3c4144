// Large configurations and many connections: what our drain costs Envoy, and itself, as a gateway
// grows. For 10 → 20,000 TLS filter chains (Envoy Gateway's chain shape), 1 → 1,000 listeners and
// 10 → 20,000 client connections, one real drain by the built executable at each size
// (bench/support/drain-at-size.ts): Envoy's time per admin read and the bytes read, the reads per
// drain and their share of Envoy's main thread beside the peers' fixed polling, the release after
// the last busy connection's close, and the hook's CPU per read and peak memory, each as a ratio to
// the smallest size of its series in the same run. Then, at the two largest configurations, one
// drain each through ours and through both drop-ins in the drop-in test's sandboxed pod
// (bench/support/drop-ins-at-size.ts): whether each ended by itself, how soon, and at what cost.
import { loadavg } from 'node:os';
import { HOOKS, type Hook } from '../test/dropin/support/large-config-pod.js';
import type { LargeConfigSize } from '../test/support/large-config/expand.js';
import { envoyVersion } from '../test/support/real-envoy/binary.js';
import { CLOSE_AFTER_MS, drainAtSize, HOOK_ARGS, STATUS_ARGS, STATUS_READS, startupUsage, type DrainCost, type HookUsage, type Workload } from './support/drain-at-size.js';
import { buildDropInRunner, drainThroughHook, type DropInDrain } from './support/drop-ins-at-size.js';
import { type Scenario, formatMiB, formatMs, openFilesHardLimit, progress, ratio, summarize, table, withScratch } from './support/harness.js';
import { describeMachine } from './support/machine.js';

/** The sizes bench/support/large-config-main.ts measures every admin endpoint at, by default. */
export const SIZES: readonly LargeConfigSize[] = [
  { listeners: 1, chainsPerListener: 10 },
  { listeners: 1, chainsPerListener: 1_000 },
  { listeners: 1, chainsPerListener: 5_000 },
  { listeners: 1, chainsPerListener: 20_000 },
  { listeners: 100, chainsPerListener: 3 },
  { listeners: 1_000, chainsPerListener: 3 },
];

/** The acceptance lines the table is read against. */
const ENVOY_SHARE_LIMIT = 0.05;
const GROWTH_LIMIT = 2;
const RELEASE_LIMIT_MS = 50;
/** A drain through each drop-in must end by itself within this, both idle connections open and no scrape lost. */
const DROP_IN_DRAIN_LIMIT_MS = 4_000;
const EG_POLL_MS = 1_000;
const CONTOUR_POLL_MS = 5_000;
/** Sizes this small get this many drains (a fresh Envoy each); the larger ones one (Envoy takes 10+ s and ~1 GB to start at 20,000 chains). */
const SMALL_ROUNDS = 5;
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

interface Series {
  readonly title: string;
  readonly sizes: ReadonlyArray<{ readonly label: string; readonly workload: Workload }>;
}

const config = (listeners: number, chainsPerListener: number): Workload => ({ kind: 'config', size: { listeners, chainsPerListener } });

const SERIES: readonly Series[] = [
  { title: 'TLS filter chains on one HTTPS listener', sizes: [10, 1_000, 5_000, 20_000].map((n) => ({ label: `${n.toLocaleString('en')} chains`, workload: config(1, n) })) },
  { title: 'HTTPS listeners of 3 chains each', sizes: [1, 100, 1_000].map((n) => ({ label: `${n.toLocaleString('en')} listener${n === 1 ? '' : 's'}`, workload: config(n, 3) })) },
  { title: 'idle pooled client connections (h2load)', sizes: CONNECTIONS.map((n) => ({ label: `${n.toLocaleString('en')} connections`, workload: { kind: 'connections', idle: n } })) },
];

/** The drop-ins' drains: the two largest configurations, one run per hook (Envoy takes up to a minute and 1 GB to load 20,000 chains). */
const DROP_IN_SIZES: ReadonlyArray<{ readonly label: string; readonly size: LargeConfigSize }> = [
  { label: '20,000 chains', size: { listeners: 1, chainsPerListener: 20_000 } },
  { label: '1,000 listeners', size: { listeners: 1_000, chainsPerListener: 3 } },
];
const DROP_IN_HOOKS: readonly Hook[] = ['ours', 'envoy-gateway', 'contour'];
const HOOK_TITLE: Record<Hook, string> = { ours: 'ours (`shutdown`)', 'envoy-gateway': 'Envoy Gateway’s drop-in', contour: 'Contour’s drop-in' };

function rounds(workload: Workload): number {
  const small = workload.kind === 'config' ? workload.size.listeners * workload.size.chainsPerListener <= 1_000 : workload.idle <= 1_000;
  return small ? SMALL_ROUNDS : 1;
}

type Measure = 'envoyCpu' | 'envoyWall' | 'bytes' | 'gets' | 'calls' | 'drainMs' | 'share' | 'releaseMs' | 'hookCpu' | 'hookCpuPerCall' | 'hookCpuPerRead' | 'statusCpuPerRead' | 'statusPeakKiB' | 'hookPeakKiB' | 'load' | 'envoyReadyMs' | 'envoyRssMiB';

interface Row {
  readonly label: string;
  readonly runs: number;
  readonly results: readonly string[];
  /** Medians over the runs. */
  readonly m: Readonly<Record<Measure, number>>;
}

function measures(cost: DrainCost, startupCpuMs: number): Record<Measure, number> {
  return {
    envoyCpu: cost.envoyCpuMsPerRead,
    envoyWall: cost.envoyWallMsPerRead,
    bytes: cost.bytesPerRead,
    gets: cost.gets,
    calls: cost.calls,
    drainMs: cost.drainMs,
    share: (cost.envoyCpuMsPerRead * cost.gets) / cost.drainMs,
    releaseMs: cost.releaseMs,
    hookCpu: cost.hookCpuMs,
    hookCpuPerCall: cost.hookCpuMs / cost.calls,
    hookCpuPerRead: (cost.hookCpuMs - startupCpuMs) / cost.calls,
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
  for (const { label, workload } of series.sizes) {
    const costs: DrainCost[] = [];
    const failures: string[] = [];
    for (let run = 0; run < rounds(workload); run += 1) {
      progress('large-config', `${label}: drain ${run + 1} of ${rounds(workload)} (load ${loadavg()[0]?.toFixed(1)})`);
      try {
        costs.push(await withScratch('large-config', (dir) => drainAtSize(workload, dir)));
      } catch (error) {
        // A failed run is shown in the table, and tried once more.
        failures.push((error as Error).message.split('\n')[0] ?? 'failed');
        progress('large-config', `${label}: ${failures.at(-1)}`);
        if (failures.length <= MAX_FAILURES) run -= 1;
      }
    }
    const all = costs.map((cost) => measures(cost, startupCpuMs));
    const keys = Object.keys(measures({ status: {} } as DrainCost, 0)) as Measure[];
    const m = Object.fromEntries(keys.map((key) => [key, all.length === 0 ? Number.NaN : summarize(all.map((x) => x[key])).median])) as Record<Measure, number>;
    rows.push({ label, runs: costs.length, results: [...costs.map((cost) => cost.result), ...failures.map((failure) => `failed: ${failure}`)], m });
  }
  return rows;
}

const pct = (share: number): string => (Number.isFinite(share) ? `${(share * 100).toFixed(share < 0.01 ? 2 : 1)} %` : '—');
const bytes = (n: number): string => (!Number.isFinite(n) ? '—' : n >= 1024 * 1024 ? `${(n / 1024 / 1024).toFixed(2)} MiB` : n >= 1024 ? `${(n / 1024).toFixed(1)} KiB` : `${n.toFixed(0)} B`);

function envoyTable(rows: readonly Row[]): string {
  const base = rows[0];
  return table(
    ['size', 'drains', 'Envoy ready after, RSS', 'Envoy CPU per read', 'Envoy wall per read', 'bytes per read', 'reads per drain (all admin calls)', 'drain ended after', 'share of Envoy’s main thread: ours', 'EG 1 s poll', 'Contour 5 s poll'],
    rows.map((row) => [
      row.label,
      `${row.runs} (${[...new Set(row.results)].join(', ')})`,
      `${formatMs(row.m.envoyReadyMs)}, ${Number.isFinite(row.m.envoyRssMiB) ? row.m.envoyRssMiB.toFixed(0) : '—'} MiB`,
      `${formatMs(row.m.envoyCpu)} (${ratio(row.m.envoyCpu, base?.m.envoyCpu ?? Number.NaN)})`,
      formatMs(row.m.envoyWall),
      `${bytes(row.m.bytes)} (${ratio(row.m.bytes, base?.m.bytes ?? Number.NaN)})`,
      `${Number.isFinite(row.m.gets) ? row.m.gets.toFixed(0) : '—'} (${Number.isFinite(row.m.calls) ? row.m.calls.toFixed(0) : '—'})`,
      formatMs(row.m.drainMs),
      `**${pct(row.m.share)}**`,
      pct(row.m.envoyCpu / EG_POLL_MS),
      pct(row.m.envoyCpu / CONTOUR_POLL_MS),
    ]),
  );
}

function hookTable(rows: readonly Row[]): string {
  const base = rows[0];
  return table(
    ['size', 'release after the busy connection’s close', 'hook CPU per drain', 'per admin call, start-up included', 'per read: `status --watch` above start-up', 'hook peak RSS', '`status` peak RSS', 'load (1 min)'],
    rows.map((row) => [
      row.label,
      formatMs(row.m.releaseMs),
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
      progress('large-config', `${label}: drain through ${hook === 'ours' ? 'our shutdown' : `${hook}'s drop-in`} in the sandboxed pod (load ${loadavg()[0]?.toFixed(1)})`);
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

const countOf = (n: number): string => n.toLocaleString('en');

function dropInTable(rows: readonly DropInRow[]): string {
  return table(
    ['hook', 'size', 'result (exit code)', 'drain ended after', 'idle HTTP/1.1, HTTP/2 open at the release', 'scrapes sent (not 200)', 'stats reads (all GETs)', 'bytes per read', 'Envoy CPU per read', 'share of Envoy’s main thread', 'Envoy ready after'],
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
  const command = (hook: Hook): string => `\`${HOOKS[hook].hook.map((arg) => (arg.startsWith('/') && arg.includes('dist/') ? 'dist/envoy-shutdown-manager' : arg)).join(' ')}\``;
  return [
    `Real Envoy ${envoy} in the drop-in test's pod (test/dropin/support/large-config-pod.ts, test/dropin/support/pod.ts): a user, network and mount namespace with only a loopback interface and its own /tmp and /admin (test/support/sandbox.ts), so Envoy runs on the peer's own ports and admin address (Envoy Gateway: \`127.0.0.1:19000\`, \`--drain-strategy immediate --drain-time-s 60\`; Contour: \`/admin/admin.sock\`), \`--concurrency 1\`, and the single executable is linked as \`/bin/contour\` and \`envoy-gateway\` on PATH, as the image links it. Each peer's own HTTPS fixture (Envoy Gateway's chain shape as above; for Contour's drop-in, Contour's TLS virtual-host chain) grown to ${DROP_IN_SIZES.map((size) => size.label).join(' or ')} (3 chains each) as above, beside the peer's HTTP listener holding an idle HTTP/1.1 and an idle HTTP/2 (h2c) connection, each after one answered request, and the peer's stats listener with a scraper (\`GET /stats/prometheus\` on one keep-alive connection every 100 ms while the hook runs; the listener's cluster reaches the real admin API, not the tap in front of it, so no scrape is counted as the hook's read). Then the hook, as each controller renders it: ours ${command('ours')}; Envoy Gateway's ${command('envoy-gateway')}; Contour's ${command('contour')}. No busy request: the drain ends once only the idle pool is left. One drain per hook and size.`,
    '',
    `Result and "drain ended after": the hook's own "shutdown finished" log line (its \`result\` and \`elapsedMs\`; the drop-ins exit 0 whether drained or timed out, so the line says which). The idle connections: still open when the hook exited, right after it wrote its ready file. Stats reads: the hook's \`GET /stats\` and \`GET /stats/prometheus\`, counted by the pod's admin tap. Envoy CPU per read: once the hook exited, each distinct GET it made is replayed inside the pod straight to Envoy's admin API as above (test/support/real-envoy/read-cost.ts), weighted by how often the hook sent it; the share is that × the hook's GETs ÷ the drain's duration.`,
  ].join('\n');
}

/** The acceptance lines, read off the rows: the largest share, and the largest growth of the hook's CPU per read and peak memory. */
function verdict(all: ReadonlyArray<{ series: Series; rows: readonly Row[] }>): string {
  const rows = all.flatMap((measured) => measured.rows);
  const missing = rows.filter((row) => !Number.isFinite(row.m.share)).map((row) => row.label);
  const over = rows.filter((row) => row.m.share > ENVOY_SHARE_LIMIT).map((row) => `${row.label} ${pct(row.m.share)}`);
  const growth = (measure: Measure): string =>
    all
      .map(({ series, rows: seriesRows }) => `${series.title} ${ratio(seriesRows.at(-1)?.m[measure] ?? Number.NaN, seriesRows[0]?.m[measure] ?? Number.NaN)}`)
      .join('; ');
  const notDrained = rows.filter((row) => row.results.some((result) => result !== 'drained')).map((row) => `${row.label} (${row.results.join(', ')})`);
  const release = rows.find((row) => row.label === '1,000 chains')?.m.releaseMs ?? Number.NaN;
  return [
    `- Drains that did not end before their timeout: ${notDrained.length === 0 ? 'none' : notDrained.join('; ')}.`,
    `- Envoy's main thread (limit ${pct(ENVOY_SHARE_LIMIT)} at every size): ${over.length === 0 ? 'holds at every size measured' : `over it at ${over.join(', ')}`}${missing.length === 0 ? '' : `; not measured at ${missing.join(', ')}`}.`,
    `- Release after the busy connection's close at 1,000 chains (limit ${RELEASE_LIMIT_MS} ms): ${formatMs(release)}, ${release <= RELEASE_LIMIT_MS ? 'holds' : 'over it'}.`,
    `- The hook's CPU per read (\`status --watch\`, above start-up), largest size ÷ smallest (limit ${GROWTH_LIMIT}×): ${growth('statusCpuPerRead')}. The drain's own CPU per admin call, start-up included: ${growth('hookCpuPerCall')}; its whole CPU per drain: ${growth('hookCpu')} (the larger sizes make fewer reads, so the fixed cost of a drain weighs more on each call).`,
    `- The hook's peak RSS, largest size ÷ smallest (limit ${GROWTH_LIMIT}×): ${growth('hookPeakKiB')}.`,
  ].join('\n');
}

export const largeConfig: Scenario = {
  name: 'large-config',
  title: 'Large gateways: what the drain costs Envoy and itself, by size',
  async run() {
    const loadAtStart = loadavg();
    const envoy = await envoyVersion();
    const startups = await withScratch('large-config', async (dir) => {
      const runs: HookUsage[] = [];
      for (let n = 0; n < STARTUP_RUNS; n += 1) runs.push(await startupUsage(dir));
      return runs;
    });
    const startup = { cpuMs: summarize(startups.map((u) => u.cpuMs)).median, peakKiB: summarize(startups.map((u) => u.peakKiB)).median };
    const measured: Array<{ series: Series; rows: Row[] }> = [];
    for (const series of SERIES) measured.push({ series, rows: await measureSeries(series, startup.cpuMs) });
    const dropIns = await measureDropIns();
    const loadAtEnd = loadavg();
    const sections = measured.flatMap(({ series, rows }) => [`### ${series.title}`, '', envoyTable(rows), '', hookTable(rows), '']);
    const chains = measured[0]?.rows ?? [];
    const listeners = measured[1]?.rows ?? [];
    const releaseAt = (label: string, rows = chains): string => formatMs(rows.find((row) => row.label === label)?.m.releaseMs ?? Number.NaN);
    return [
      `Real Envoy ${envoy} (\`--concurrency 1 --drain-strategy immediate --drain-time-s 60\`), started at each size from Envoy Gateway's own \`https\` fixture (\`egctl x translate\` output, test/fixtures/peers/envoy-gateway/) grown at run time to N TLS filter chains, one per hostname, each chain as EG generates it (connection manager, JSON access log, TLS from a file), on M listeners (test/support/large-config/expand.ts); the connection series uses EG's \`http\` fixture as it is, up to ${(CONNECTIONS.at(-1) ?? 0).toLocaleString('en')} connections: Envoy needs a file descriptor for each client connection and each upstream one, and this machine's hard limit on open files (${openFilesHardLimit().toLocaleString('en')}) can only be raised with CAP_SYS_RESOURCE, which the bench does not have. At each size: two idle pooled HTTPS connections (one request each; the connection series instead holds N idle connections from h2load, Debian's nghttp2-client, half HTTP/1.1 keep-alive and half HTTP/2, each after one request), a scraper's connection on EG's stats listener (one \`GET /stats/prometheus\`, then kept alive and idle, as Prometheus leaves it between scrapes), and one busy request the backend holds. Then the built executable runs \`dist/envoy-shutdown-manager shutdown ${HOOK_ARGS.join(' ')}\`, its admin API reached through a recording pass-through (test/support/real-envoy/admin-tap.ts), which counts every admin call it makes; ${CLOSE_AFTER_MS} ms after its \`POST /drain_listeners\` the backend answers the busy request, whose client sent \`Connection: close\`, so Envoy closes that connection.`,
      '',
      `Per read: after the drain, every distinct GET the hook sent is replayed straight to Envoy's admin API one call after another (after one warm-up: at least 10 calls, and until Envoy's CPU time has moved 100 ms, ten clock ticks, or 400 calls); Envoy's CPU per read is its utime+stime (all threads, /proc/<envoy pid>/stat, its 5 s stats flush included) over the batch ÷ the calls, the wall time is the median round trip; both are weighted by how often the hook sent each GET. "Share of Envoy's main thread" is Envoy's CPU per read × the hook's GETs ÷ the drain's duration (from the ready file's report); the peers' lines are the same per-read cost at their fixed poll (Envoy Gateway's every 1 s, Contour's every 5 s). Release: from the busy connection's close, as its client saw it, to the ready file's mtime (below zero when the drain, counting requests in flight, ended as the response completed, before the client saw its connection close). The hook runs under a \`python3\` wrapper whose \`wait4\` gives its utime+stime and peak RSS (ru_maxrss, the kernel's VmHWM) at exit; its CPU per admin call is that ÷ every admin call it made, start-up included; and since the larger sizes make fewer reads, the CPU per read is taken where the reads are as many at every size: after the drain, the same executable's \`status ${STATUS_ARGS.join(' ')}\` (the drain's reads as the drain makes them: one of every stat it reads, then ones of the stats that moved, each with Envoy's state), stopped with SIGINT after ${STATUS_READS} reads of the stats, runs 3 times through the tap, and its CPU less the executable's fixed cost (\`dist/envoy-shutdown-manager --version\` under the same wrapper, median of ${STARTUP_RUNS}: ${formatMs(startup.cpuMs)}, peak RSS ${formatMiB(startup.peakKiB)}) ÷ its GETs is the CPU per read (median of the 3). Sizes of at most 1,000 chains or connections: ${SMALL_ROUNDS} drains, each on a fresh Envoy, median; larger sizes: one drain. Ratios in parentheses are to the smallest size of the same series in this run; the bold ones are the acceptance lines (share ≤ ${pct(ENVOY_SHARE_LIMIT)}; the hook's CPU per read and peak RSS ≤ ${GROWTH_LIMIT}× the smallest).`,
      '',
      `Machine: ${describeMachine().map((line) => line.replace(/^- /, '')).join('; ')}. Load average (1 min, 5 min) at the start of this section: ${loadAtStart[0]?.toFixed(2)}, ${loadAtStart[1]?.toFixed(2)}; at its end: ${loadAtEnd[0]?.toFixed(2)}, ${loadAtEnd[1]?.toFixed(2)}; other sessions shared the 2 cores, so absolute times are inflated and the ratios are what to read.`,
      '',
      ...sections,
      `Release after the last busy connection's close: ${releaseAt('1,000 chains')} at 1,000 chains, ${releaseAt('20,000 chains')} at 20,000 chains; ${releaseAt('1,000 listeners', listeners)} at 1,000 listeners, where the read after the first (full) one waits for the reads' share of Envoy's main thread, past the minimum drain and past the busy connection's close (docs/operations.md, "Large configurations").`,
      '',
      verdict(measured),
      '',
      '### Through the drop-ins, at the largest sizes',
      '',
      dropInMethod(envoy),
      '',
      dropInTable(dropIns),
      '',
      dropInVerdict(dropIns),
      '',
      'Envoy\'s cost of every other admin endpoint by size (the config dump among them): `node scripts/run-ts.mjs bench/support/large-config-main.ts`.',
    ].join('\n');
  },
};
