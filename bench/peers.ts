// 9. Side by side with the peers' real binaries: our executable, Envoy Gateway's `envoy-gateway`
// and Contour's `contour` (paths in EG_BIN and CONTOUR_BIN; bench/README.md says how to build
// them), each pair (manager + preStop hook) beside real Envoy 1.40 in its own network and mount
// namespace, rounds interleaved.
import { readFileSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { PodObservation, PodScenario } from '../test/support/dropin/pod.js';
import { ensureEnvoyBinary, envoyVersion } from '../test/support/real-envoy/binary.js';
import { runSandboxed } from '../test/support/sandbox.js';
import { buildDropInRunner, DROPIN_RUNNER } from './support/drop-ins-at-size.js';
import { EXECUTABLE, formatMiB, formatMs, memoryAfter, NODE, progress, type Scenario, spawnTimed, stopChild, summarize, table } from './support/harness.js';

/** PEERS_ROUNDS overrides, for a quick look while iterating. */
const ROUNDS = Number(process.env.PEERS_ROUNDS ?? 3);
const IDLE_MS = 10_000;
/**
 * Start-up transients are not idle cost: V8 finishes some background work a few seconds after the
 * first connection (the listening probe), and our manager wakes once more at its --request-timeout
 * (10 s) after that connection closed: Node leaves the libuv timer of a cleared timeout armed, so
 * it fires once with nothing to run (strace: one epoll_pwait timing out, then none).
 */
const SETTLE_MS = 12_000;
/** Four idle keep-alive connections closed at 1, 2, 3 and 4 s: a 3–4 s drain. */
const CLOSE_AT_MS = [1_000, 2_000, 3_000, 4_000];

type Shape = 'envoy-gateway' | 'contour';
/** Each shape's user listener, where the idle connections are, and its ready file. */
const SHAPES: Readonly<Record<Shape, { readonly userPort: number; readonly readyFile: string }>> = {
  'envoy-gateway': { userPort: 10080, readyFile: '/tmp/shutdown-ready' },
  contour: { userPort: 8080, readyFile: '/admin/ok' },
};

interface PeerFigures {
  readonly listeningMs: number;
  readonly idleCpuMs: number;
  readonly idleRssAnonKiB: number;
  readonly firstAdminMs: number;
  readonly hookCpuMs: number;
  readonly adminRequests: number;
  /** Last connection closed → Envoy's preStop GET answered. */
  readonly releaseMs: number;
  /** Hook started → Envoy's preStop GET answered. */
  readonly terminationMs: number;
  readonly readyStatus: number;
  readonly hookExit: number | null;
}

type Who = 'ours' | 'envoy-gateway' | 'contour';

interface Contender {
  readonly who: Who;
  readonly label: string;
  readonly binary: string;
  run(envoyBinary: string): PodScenario;
}

/** One pod run in the sandbox (test/support/dropin/pod.ts): Envoy drains at once in both shapes, the idle manager and the hook's CPU measured. */
const common = { closeIdleAfterMs: CLOSE_AT_MS, managerIdle: { settleMs: SETTLE_MS, idleMs: IDLE_MS }, hookCpu: true, drainImmediately: true };

/** Each contender's pod: ours as the peers' pods run it, then the peers' own, their binary's path in `env`. */
const CONTENDERS: readonly (Pick<PodScenario, 'managerPort' | 'readyPath'> & {
  readonly shape: Shape;
  readonly who: Who;
  readonly label: string;
  readonly env?: string;
  manager(binary: string): string[];
  hook(binary: string): string[];
})[] = [
  {
    who: 'ours',
    label: 'ours',
    shape: 'envoy-gateway',
    managerPort: 19002,
    readyPath: '/shutdown/ready',
    manager: (binary) => [binary, 'shutdown-manager', '--port', '19002', '--ready-file', '/tmp/shutdown-ready'],
    hook: (binary) => [
      binary,
      'shutdown',
      '--admin-address',
      '127.0.0.1:19000',
      '--connections',
      'listeners',
      '--min-drain-duration',
      '2s',
      '--drain-timeout',
      '60s',
      '--ready-file',
      '/tmp/shutdown-ready',
    ],
  },
  {
    who: 'envoy-gateway',
    label: 'Envoy Gateway',
    env: 'EG_BIN',
    shape: 'envoy-gateway',
    managerPort: 19002,
    readyPath: '/shutdown/ready',
    manager: (binary) => [binary, 'envoy', 'shutdown-manager'],
    hook: (binary) => [binary, 'envoy', 'shutdown', '--drain-timeout=60s', '--min-drain-duration=2s'],
  },
  {
    who: 'contour',
    label: 'Contour',
    env: 'CONTOUR_BIN',
    shape: 'contour',
    managerPort: 8090,
    readyPath: '/shutdown',
    manager: (binary) => [binary, 'envoy', 'shutdown-manager'],
    hook: (binary) => [binary, 'envoy', 'shutdown'],
  },
];

function contenders(): { present: Contender[]; skipped: string[] } {
  const present: Contender[] = [];
  const skipped: string[] = [];
  for (const { who, label, env, shape, managerPort, readyPath, manager, hook } of CONTENDERS) {
    const path = env === undefined ? EXECUTABLE : process.env[env];
    if (path === undefined || path === '') {
      skipped.push(`${label} (${env ?? ''} not set)`);
      continue;
    }
    const binary = resolve(path);
    present.push({
      who,
      label,
      binary,
      run: (envoyBinary) => ({
        ...common,
        peer: shape,
        envoyBinary,
        manager: manager(binary),
        hook: hook(binary),
        managerPort,
        readyPath,
        idleOn: CLOSE_AT_MS.map(() => SHAPES[shape].userPort),
        readyFile: SHAPES[shape].readyFile,
      }),
    });
  }
  return { present, skipped };
}

interface Baseline {
  readonly nodeStartMs: number;
  readonly httpListeningMs: number;
  readonly httpRssAnonKiB: number;
}

const BARE_HTTP = "require('http').createServer().listen(0, () => console.log('up'))";

/** The goals' yardsticks on the same Node 24 binary: `node -e 0` exec → exit, a bare http server's start and idle memory. */
async function measureBaseline(): Promise<Baseline> {
  const bare = spawnTimed([NODE, '-e', '0']);
  const exit = await bare.exited;
  const server = spawnTimed([NODE, '-e', BARE_HTTP], { stdout: 'pipe' });
  const up = await new Promise<number>((resolveUp) => server.child.stdout?.once('data', () => resolveUp(performance.now())));
  const memory = await memoryAfter(server.pid, 2_000 + IDLE_MS / 4);
  await stopChild(server);
  return { nodeStartMs: exit.at - bare.startedAt, httpListeningMs: up - server.startedAt, httpRssAnonKiB: memory.anonKiB };
}

interface Row {
  readonly label: string;
  readonly pick: (figures: PeerFigures) => number;
  readonly format: (value: number) => string;
}

const ROWS: readonly Row[] = [
  { label: 'release latency: last connection closed → preStop GET answered', pick: (f) => f.releaseMs, format: formatMs },
  { label: 'termination: hook start → preStop GET answered (connections closing at 1–4 s)', pick: (f) => f.terminationMs, format: formatMs },
  { label: `manager anonymous memory (RssAnon), idle`, pick: (f) => f.idleRssAnonKiB, format: formatMiB },
  { label: '`shutdown` start → first admin request', pick: (f) => f.firstAdminMs, format: formatMs },
  { label: 'manager start → listening', pick: (f) => f.listeningMs, format: formatMs },
  {
    label: `manager CPU per 60 s idle (${IDLE_MS / 1_000} s measured, ×${60_000 / IDLE_MS})`,
    pick: (f) => (f.idleCpuMs * 60_000) / IDLE_MS,
    format: (v) => `${v.toFixed(2)} ms`,
  },
  { label: '`shutdown` CPU for that drain (user + system)', pick: (f) => f.hookCpuMs, format: formatMs },
  { label: 'admin requests in that drain', pick: (f) => f.adminRequests, format: (v) => v.toFixed(0) },
];

/** The figures of one run, from what its pod saw. */
function peerFigures(label: string, seen: PodObservation): PeerFigures {
  const { ready, hook, managerIdle } = seen;
  if (typeof ready !== 'object' || hook === undefined || managerIdle === undefined)
    throw new Error(`${label}: no preStop answer, hook or manager: ${JSON.stringify(seen)}`);
  return {
    listeningMs: managerIdle.listeningMs,
    idleCpuMs: managerIdle.cpuMs,
    idleRssAnonKiB: managerIdle.rssAnonKiB,
    firstAdminMs: seen.adminCalls[0]?.atMs ?? Number.NaN,
    hookCpuMs: hook.cpuMs ?? Number.NaN,
    adminRequests: seen.adminCalls.length,
    releaseMs: ready.atMs - (seen.idleClosedAtMs ?? Number.NaN),
    terminationMs: ready.atMs,
    readyStatus: ready.status,
    hookExit: hook.exitCode,
  };
}

async function run(): Promise<string> {
  const { present, skipped } = contenders();
  for (const line of skipped) progress('peers', `skipped: ${line}`);
  await buildDropInRunner();
  const envoyBinary = await ensureEnvoyBinary();
  const binds = [dirname(envoyBinary), ...present.map((c) => dirname(c.binary))];
  // Each binary read once beforehand: the first run would otherwise pay for reading it from disk.
  for (const contender of present) readFileSync(contender.binary);
  const results = new Map<Who, PeerFigures[]>(present.map((c) => [c.who, []]));
  const baselines: Baseline[] = [];
  for (let round = 0; round < ROUNDS; round += 1) {
    baselines.push(await measureBaseline());
    for (const contender of round % 2 === 0 ? present : [...present].reverse()) {
      const figures = peerFigures(contender.label, await runSandboxed<PodObservation>(DROPIN_RUNNER, contender.run(envoyBinary), binds));
      if (figures.readyStatus !== 200) throw new Error(`${contender.label}: preStop GET answered ${figures.readyStatus}`);
      results.get(contender.who)?.push(figures);
      progress('peers', `round ${round + 1}/${ROUNDS}: ${contender.label} done`);
    }
  }
  const median = (who: Who, pick: (f: PeerFigures) => number): number => summarize((results.get(who) ?? []).map(pick)).median;
  const range = (who: Who, row: Row): string => {
    const s = summarize((results.get(who) ?? []).map(row.pick));
    return `${row.format(s.median)} (${row.format(s.min)}–${row.format(s.max)})`;
  };
  const peers = present.filter((c) => c.who !== 'ours');
  const versus = (ours: number, theirs: readonly number[], format: (value: number) => string): string => {
    if (theirs.length === 0) return '—';
    const best = Math.min(...theirs);
    // A ratio to zero says nothing: the absolute figures then.
    if (best > 0) return (ours / best).toFixed(2);
    return ours === best ? `— (all ${format(best)})` : `— (peers ${format(best)}, ours ${format(ours)})`;
  };
  const base = (pick: (b: Baseline) => number): number => summarize(baselines.map(pick)).median;
  const yardstick: Readonly<Record<string, number>> = {
    [ROWS[2]?.label ?? '']: base((b) => b.httpRssAnonKiB),
    [ROWS[3]?.label ?? '']: base((b) => b.nodeStartMs),
    [ROWS[4]?.label ?? '']: base((b) => b.httpListeningMs),
  };
  const rows = ROWS.map((row) => {
    const ours = median('ours', row.pick);
    const node = yardstick[row.label];
    const nodeCells = node === undefined ? ['—', '—'] : [row.format(node), (ours / node).toFixed(2)];
    return [
      row.label,
      ...present.map((c) => range(c.who, row)),
      versus(
        ours,
        peers.map((c) => median(c.who, row.pick)),
        row.format,
      ),
      ...nodeCells,
    ];
  });
  const sizes = present.map((c) => statSync(c.binary).size);
  rows.push([
    'executable on disk',
    ...sizes.map((size) => `${(size / 1e6).toFixed(0)} MB`),
    versus(sizes[0] ?? Number.NaN, sizes.slice(1), (size) => `${(size / 1e6).toFixed(0)} MB`),
    `${(statSync(NODE).size / 1e6).toFixed(0)} MB (unstripped)`,
    '—',
  ]);
  return [
    `Real Envoy ${await envoyVersion()}; each manager and its hook in a user, network and mount namespace of their own (\`unshare -rnm\`, test/support/sandbox.ts) with the peer's fixed ports and paths, the admin API behind a recording pass-through (one loopback hop more for everyone). ${ROUNDS} rounds, the contenders interleaved (order reversed every other round); median (min–max). Per run: start the manager (connect polled every 1 ms until it listens), ${SETTLE_MS / 1_000} s settle (start-up transients: see below), ${IDLE_MS / 1_000} s idle (CPU of all its threads from /proc/<pid>/task/*/schedstat, RssAnon at its end), then four idle keep-alive connections on the user listener, Envoy's preStop GET sent to the manager and the hook started (under \`bash\`, whose \`times\` gives the hook's CPU), the connections closed at 1, 2, 3 and 4 s.`,
    '',
    `Hooks: ours \`shutdown --connections listeners --min-drain-duration 2s --drain-timeout 60s\`; Envoy Gateway \`envoy shutdown --drain-timeout=60s --min-drain-duration=2s\` (its 1 s checks); Contour \`envoy shutdown\` with its defaults (5 s checks, no minimum drain). Managers at their defaults (ours \`--port 19002\`). "ours/best" is our median over the best peer's.`,
    '',
    skipped.length === 0
      ? ''
      : `**Skipped: ${skipped.join('; ')}.** Set the missing variable to compare with that peer (bench/README.md says how to build it).\n`,
    table(['figure', ...present.map((c) => c.label), 'ours/best', 'Node baseline', 'ours/Node'], rows),
    '',
    `"Node baseline", on the Node 24 binary the executable is made from, outside the sandbox, once per round: for memory, a bare \`http.createServer().listen(0)\` after ${(2_000 + IDLE_MS / 4) / 1_000} s; for the hook's start, \`node -e 0\` exec → exit; for listening, the bare server's exec → its first stdout line. Goals: RssAnon ≤ 1.25× the bare server, start → first admin request ≤ 1.2× \`node -e 0\`.`,
    '',
    `Idle CPU is measured from ${SETTLE_MS / 1_000} s after the listening probe: before that, V8 finishes background work begun at the first connection, and our manager wakes once at its \`--request-timeout\` (10 s) after the probe's connection closed (Node leaves the libuv timer of a cleared timeout armed; it fires once, finds nothing to run, and is not re-armed). Each connection costs that one late wake-up; an idle manager with no connections has none (strace: no system call in 30 s). A ratio to a peer's zero is meaningless: that cell gives both figures instead. Section 10 (executable-size) takes the executable apart.`,
  ].join('\n');
}

export const peers: Scenario = { name: 'peers', title: '9. Side by side with the peers’ real binaries', run };
