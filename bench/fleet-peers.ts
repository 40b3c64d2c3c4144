// 14. One rolling update of 8 pods behind HAProxy, under the same load, for five fleets: Envoy
// Gateway's rendered pod with its own manager and with ours in its place, Contour's rendered pod
// likewise, and the chart's pod. The fleet rig of the tests (test/support/fleet/fleet-run.ts: real
// Envoy 1.40 in podman pods, terminated as a 1.33 kubelet does, HAProxy health-checking each pod's
// readiness listener with retries off, hey, HTTP/1.1 and HTTP/2 clients, long requests at each
// deletion, idle pooled connections, a scraper on each pod's stats listener) runs each fleet in a
// network namespace of its own; the peers' managers run from images FROM scratch holding their own
// binaries, built from the pinned commits (support/peer-images.ts). Rounds interleaved.

import { buildFixtures } from '../test/support/fixtures.js';
import { errorCount } from '../test/support/fleet/error-count.js';
import type { FleetInput, FleetOutput } from '../test/support/fleet/fleet-run.js';
import { FLEET_RUNNER, TEST_CHECK } from '../test/support/fleet/fleet-settings.js';
import { ensureHey } from '../test/support/fleet/hey.js';
import { runInPrivateNetns } from '../test/support/fleet/netns.js';
import { fleetPodSpec, type PeerPodChoice } from '../test/support/fleet/peer-fleet-pod.js';
import { buildAmd64Images } from '../test/support/podman/images.js';
import { removeRun } from '../test/support/podman/podman-run.js';
import { envoyVersion } from '../test/support/real-envoy/binary.js';
import { formatMs, progress, type Scenario, summarize, table } from './support/harness.js';
import { type PeerBinary, peerBinary, peerManagerImage } from './support/peer-images.js';

/** FLEET_PEERS_ROUNDS overrides, for a quick look while iterating. */
const ROUNDS = Number(process.env.FLEET_PEERS_ROUNDS ?? 3);
const REPLICAS = 8;
/** The same minimum drain and drain timeout for every fleet: Envoy Gateway's rendered pod's (its renderer's EnvoyProxy settings). */
const MIN_DRAIN_S = 2;
const DRAIN_TIMEOUT_S = 15;
/**
 * Long requests outlast the minimum drain, so each drain's end is decided by its count of
 * connections, not by its floor: what is measured is how soon each manager lets go after them.
 */
const LONG_REQUEST_MS = 4_000;
/** Bounds a rollout (a fleet whose every drain runs to its timeout takes a few minutes). */
const ROLLOUT_TIMEOUT_MS = 10 * 60_000;

type FleetName = 'eg-own' | 'eg-ours' | 'contour-own' | 'contour-ours' | 'chart';

interface Fleet {
  readonly name: FleetName;
  readonly label: string;
  /** The peer's own fleet this one is compared with (ours in the peer's pod), if any. */
  readonly versus?: FleetName;
  input(base: FleetInput): FleetInput;
}

/** Contour has no minimum drain: `--check-delay` (no count before it) is its own flag for one. */
const CONTOUR_MIN_DRAIN = [`--check-delay=${MIN_DRAIN_S}s`];
/**
 * Contour has no drain timeout either: only the pod's grace period (300 s as rendered) ends a
 * drain, by cutting the hooks and stopping the containers. Set to the shared drain timeout (at 300 s
 * a fleet of 8 pods, one at a time, whose drains all run to the end would take 40 minutes).
 */
const CONTOUR_GRACE_S = DRAIN_TIMEOUT_S;

function fleets(images: { ours: string; eg: string; contour: string }): Fleet[] {
  const peer =
    (choice: Omit<PeerPodChoice, 'hookFlags'> & { hookFlags?: readonly string[] }) =>
    (base: FleetInput): FleetInput => ({ ...base, peerPod: { hookFlags: [], ...choice } });
  return [
    { name: 'eg-own', label: "Envoy Gateway's pod, its own manager", input: peer({ peer: 'envoy-gateway', fixture: 'http', managerImage: images.eg }) },
    {
      name: 'eg-ours',
      label: "Envoy Gateway's pod, ours (drop-in)",
      versus: 'eg-own',
      input: peer({ peer: 'envoy-gateway', fixture: 'http', managerImage: images.ours }),
    },
    {
      name: 'contour-own',
      label: "Contour's pod, its own manager",
      input: peer({ peer: 'contour', fixture: 'gateway-api', managerImage: images.contour, hookFlags: CONTOUR_MIN_DRAIN, graceSeconds: CONTOUR_GRACE_S }),
    },
    {
      name: 'contour-ours',
      label: "Contour's pod, ours (drop-in)",
      versus: 'contour-own',
      input: peer({ peer: 'contour', fixture: 'gateway-api', managerImage: images.ours, hookFlags: CONTOUR_MIN_DRAIN, graceSeconds: CONTOUR_GRACE_S }),
    },
    {
      name: 'chart',
      label: "the chart's pod",
      // The chart's defaults but for the shared minimum drain and timeout, and the drop-ins' 2 s quiet period.
      input: (base) => ({ ...base, chartShutdown: { minDrainDuration: MIN_DRAIN_S, drainTimeout: DRAIN_TIMEOUT_S, quietPeriod: 2 } }),
    },
  ];
}

/** What one fleet's rollout showed, in the table's terms. */
interface Figures {
  readonly errors: number;
  readonly bySource: string;
  readonly rolloutMs: number;
  /** First to last deletion: paced by the new pods becoming ready, whatever the manager. */
  readonly deletionsMs: number;
  readonly drainMs: readonly number[];
  readonly heldMs: readonly number[];
  readonly byItself: number;
  readonly atTimeout: number;
  readonly strategy: string;
}

function figures(out: FleetOutput): Figures {
  const at = (pod: string, kind: string): number | undefined => out.rollout.events.find((e) => e.pod === pod && e.kind === kind)?.t;
  const deleted = out.rollout.events.filter((e) => e.kind === 'deleted').map((e) => e.t);
  const exited = out.rollout.drains.map((d) => at(d.pod, 'exited') ?? Number.NaN);
  // The drain: kubelet's start of the hooks to the return of Envoy's (the preStop GET answered).
  const drainMs = out.rollout.drains.map((d) => (at(d.pod, 'envoy-hook-returned') ?? Number.NaN) - (at(d.pod, 'terminating') ?? Number.NaN));
  const atTimeout = out.rollout.drains.filter((d, i) => d.envoyHook === 'cut at the grace period' || (drainMs[i] ?? 0) >= DRAIN_TIMEOUT_S * 1_000).length;
  const { econ, eresp, srvAbrt, frontend5xx, wretr, wredis } = out.haproxy.totals;
  const bySource = [
    `hey ${out.hey.failed}/${out.hey.responses + Object.values(out.hey.errors).reduce((a, b) => a + b, 0)}`,
    `HTTP/1.1 ${out.clients.http1.failures.length}`,
    `HTTP/2 ${out.clients.http2.failures.length}`,
    `long ${out.longRequests.failures.length}/${out.longRequests.sent}`,
    `HAProxy ${econ + eresp + srvAbrt + frontend5xx + wretr + wredis}`,
  ].join(', ');
  return {
    errors: errorCount(out),
    bySource,
    rolloutMs: Math.max(...exited) - Math.min(...deleted),
    deletionsMs: Math.max(...deleted) - Math.min(...deleted),
    drainMs,
    heldMs: Object.values(out.heldForNothingMs).map((ms) => ms ?? Number.NaN),
    byItself: out.rollout.drains.length - atTimeout,
    atTimeout,
    strategy: `maxSurge ${out.strategy.maxSurge}, maxUnavailable ${out.strategy.maxUnavailable}`,
  };
}

/** Every error message a fleet's clients saw, deduplicated, for the notes. */
function errorKinds(out: FleetOutput): string[] {
  const heyErrors = Object.entries(out.hey.errors).map(([message, count]) => `hey ${count}× ${message.replace(/127\.0\.0\.1:\d+/g, 'haproxy')}`);
  const statuses = Object.entries(out.hey.statuses)
    .filter(([code]) => !code.startsWith('2'))
    .map(([code, count]) => `hey ${count}× status ${code}`);
  const clients = [...out.clients.http1.failures, ...out.clients.http2.failures, ...out.longRequests.failures];
  const counted = new Map<string, number>();
  for (const failure of clients) counted.set(failure, (counted.get(failure) ?? 0) + 1);
  // A 5xx HAProxy relayed from a pod, or one it sent itself (no server up in the backend).
  const fromPods = out.haproxy.servers.reduce((sum, server) => sum + server.hrsp5xx, 0);
  const own = out.haproxy.totals.frontend5xx - fromPods;
  const haproxy =
    out.haproxy.totals.frontend5xx === 0
      ? []
      : [
          `HAProxy's frontends sent ${out.haproxy.totals.frontend5xx} 5xx: ${fromPods} from the pods (${out.haproxy.servers
            .filter((server) => server.hrsp5xx > 0)
            .map((server) => `${server.backend}/${server.server} ${server.hrsp5xx}`)
            .join(', ')}), ${own} of its own (no pod up in the backend)`,
        ];
  return [...heyErrors, ...statuses, ...[...counted].map(([failure, count]) => `${count}× ${failure}`), ...haproxy];
}

/** Envoy Gateway's rendered hook and grace period, checked against the shared settings (the renderer's EnvoyProxy sets them). */
function renderedEgDrain(): { hook: readonly string[]; grace: number } {
  const spec = fleetPodSpec({ peer: 'envoy-gateway', hookFlags: [] });
  const hook = spec.containers.find((c) => c.name === 'shutdown-manager')?.lifecycle?.preStop?.exec?.command ?? [];
  const envoyArgs = spec.containers.find((c) => c.name === 'envoy')?.args ?? [];
  const drainTimeS = envoyArgs[envoyArgs.indexOf('--drain-time-s') + 1];
  if (
    !hook.includes(`--min-drain-duration=${MIN_DRAIN_S}s`) ||
    !hook.includes(`--drain-timeout=${DRAIN_TIMEOUT_S}s`) ||
    drainTimeS !== String(DRAIN_TIMEOUT_S)
  ) {
    throw new Error(
      `Envoy Gateway's rendered pod no longer drains ${MIN_DRAIN_S} s / ${DRAIN_TIMEOUT_S} s: hook ${hook.join(' ')}, --drain-time-s ${drainTimeS}`,
    );
  }
  return { hook, grace: spec.terminationGracePeriodSeconds ?? 30 };
}

async function run(): Promise<string> {
  const log = (line: string): void => progress('fleet-peers', line);
  await buildFixtures();
  const built = await buildAmd64Images(log);
  const binaries: Record<'eg' | 'contour', PeerBinary> = { eg: await peerBinary('envoy-gateway', log), contour: await peerBinary('contour', log) };
  const images = {
    ours: built.manager,
    eg: await peerManagerImage('envoy-gateway', binaries.eg.path),
    contour: await peerManagerImage('contour', binaries.contour.path),
  };
  const heyBinary = ensureHey();
  const runId = `bench${process.pid}${Date.now().toString(36)}`;
  const base: FleetInput = {
    mode: 'health-check',
    network: 'pod',
    hooks: true,
    replicas: REPLICAS,
    minDrainSeconds: MIN_DRAIN_S,
    healthCheck: { ...TEST_CHECK, path: '/ready' },
    removeLagMs: 0,
    images: { manager: built.manager, managerTag: built.managerTag, envoy: built.envoy },
    runId,
    heyBinary,
    longRequestMs: LONG_REQUEST_MS,
    podIdle: true,
    rolloutTimeoutMs: ROLLOUT_TIMEOUT_MS,
  };
  const all = fleets(images);
  const { hook: egHook, grace: egGrace } = renderedEgDrain();
  // FLEET_PEERS_ONLY=eg-own,eg-ours runs only those fleets, for a quick look while iterating.
  const only = process.env.FLEET_PEERS_ONLY?.split(',');
  const selected = only === undefined ? all : all.filter((f) => only.includes(f.name));
  const results = new Map<FleetName, Figures[]>(selected.map((f) => [f.name, []]));
  const notes = new Map<FleetName, Set<string>>(selected.map((f) => [f.name, new Set()]));
  let versions = '';
  try {
    for (let round = 0; round < ROUNDS; round += 1) {
      for (const fleet of round % 2 === 0 ? selected : [...selected].reverse()) {
        const out = await runInPrivateNetns<FleetOutput>(FLEET_RUNNER, fleet.input(base), ROLLOUT_TIMEOUT_MS + 5 * 60_000);
        const measured = figures(out);
        results.get(fleet.name)?.push(measured);
        for (const kind of errorKinds(out)) notes.get(fleet.name)?.add(kind);
        versions = `HAProxy ${out.versions.haproxy}, hey ${out.versions.hey}`;
        log(
          `round ${round + 1}/${ROUNDS}: ${fleet.label}: ${measured.errors} errors (${measured.bySource}), rollout ${formatMs(measured.rolloutMs)}, drains ${measured.drainMs.map((ms) => formatMs(ms)).join(' ')}, held ${measured.heldMs.map((ms) => formatMs(ms)).join(' ')}, ${measured.byItself} by itself`,
        );
      }
    }
  } finally {
    await removeRun(runId);
  }

  const median = (values: readonly number[]): number => summarize(values).median;
  const rollouts = (name: FleetName): number[] => (results.get(name) ?? []).map((f) => f.rolloutMs);
  const pods = (name: FleetName, pick: (f: Figures) => readonly number[]): number[] => (results.get(name) ?? []).flatMap(pick);
  const spread = (values: readonly number[]): string => {
    const s = summarize(values);
    return `${formatMs(s.median)} (${formatMs(s.min)}–${formatMs(s.max)})`;
  };
  const rows = selected.map((fleet) => {
    const runs = results.get(fleet.name) ?? [];
    const versus = fleet.versus;
    const ratio = (pick: (name: FleetName) => number[]): string =>
      versus === undefined || !results.has(versus) ? '—' : (median(pick(fleet.name)) / median(pick(versus))).toFixed(2);
    return [
      fleet.label,
      runs.map((f) => String(f.errors)).join(', '),
      runs.map((f) => f.bySource).join('; '),
      spread(rollouts(fleet.name)),
      spread((results.get(fleet.name) ?? []).map((f) => f.deletionsMs)),
      spread(pods(fleet.name, (f) => f.drainMs)),
      spread(pods(fleet.name, (f) => f.heldMs)),
      `${runs.reduce((n, f) => n + f.byItself, 0)} / ${runs.reduce((n, f) => n + f.atTimeout, 0)}`,
      ratio(rollouts),
      ratio((name) => pods(name, (f) => f.drainMs)),
      ratio((name) => pods(name, (f) => f.heldMs)),
    ];
  });
  const strategies = selected.map((f) => `${f.label}: ${results.get(f.name)?.[0]?.strategy ?? '?'}`).join('; ');
  const errorNotes = selected.flatMap((f) => {
    const kinds = [...(notes.get(f.name) ?? [])];
    return kinds.length === 0 ? [] : [`- ${f.label}: ${kinds.slice(0, 8).join('; ')}${kinds.length > 8 ? ` (and ${kinds.length - 8} more kinds)` : ''}`];
  });
  return [
    `Real Envoy ${await envoyVersion()}, ${versions}. The peers' binaries: Envoy Gateway ${binaries.eg.source}, Contour ${binaries.contour.source}, each alone in an image FROM scratch at the path its pod execs. ${ROUNDS} rounds, the fleets interleaved (order reversed every other round); figures are over every round (per-pod figures over every pod of every round): median (min–max).`,
    '',
    `Each fleet: ${REPLICAS} pods in podman (real containers; the peers' pods with only their own loopback, reached through a bridge, as in the peer tests), one rolling update, each deleted pod terminated as a 1.33 kubelet does. HAProxy in front, retries off, keep-alive to the pods, checking each pod's readiness listener (\`GET /ready\`, HTTP/1.1) every ${TEST_CHECK.intervalMs} ms, out after ${TEST_CHECK.fall} failures, in after ${TEST_CHECK.rise}. Load through HAProxy: hey (8 workers × 25 requests/s, HTTP/1.1, bounded by its -z), 3 HTTP/1.1 clients and 2 HTTP/2 sessions × 2 streams (10 ms think time), ${REPLICAS * 2} long requests (${LONG_REQUEST_MS / 1_000} s, half HTTP/1.1, half HTTP/2) put in flight before each deletion, three idle pooled client connections, and on each pod from its start: a scraper's keep-alive connection on its stats listener and a balancer's pooled HTTP/1.1 and HTTP/2 connections on its traffic listener, all idle (a cloud balancer keeps its pool whatever the pod's health; HAProxy closes its own). Strategies as each workload renders them for ${REPLICAS} pods: ${strategies}. The Deployments (Envoy Gateway's, the chart's) start each new pod at once and delete the next old pod as soon as enough new ones are ready, so old pods drain side by side; Contour's DaemonSet, without surge, creates a node's new pod only once the old one is gone (its controller counts a terminating pod as the node's), so its pods are replaced one after another, drain and exit included. Each peer pod's bridge (its only way in and out, standing in for the pod network) starts with the pod's first container and runs at a higher priority than the pods' processes, as the kernel carries a real pod's traffic ahead of them.`,
    '',
    `Same minimum drain and drain timeout for all: ${MIN_DRAIN_S} s and ${DRAIN_TIMEOUT_S} s. Envoy Gateway's pod as its renderer wrote it (\`${egHook.join(' ')}\`, Envoy with \`--drain-strategy immediate --drain-time-s ${DRAIN_TIMEOUT_S}\`, grace period ${egGrace} s); Contour's with \`${CONTOUR_MIN_DRAIN.join(' ')}\` added to its \`contour envoy shutdown\` hook (Contour's own flag: no count before it) and its grace period set to ${CONTOUR_GRACE_S} s (rendered: 300 s): Contour has no drain timeout, the grace period is its only bound (at 300 s a fleet whose drains all run to the end would take 40 minutes); its Envoy drains gradually as rendered. The chart with \`shutdown.minDrainDuration=${MIN_DRAIN_S}\`, \`drainTimeout=${DRAIN_TIMEOUT_S}\` and \`quietPeriod=2\` (the drop-ins' quiet period), its other values at their defaults. The drop-ins run with what each peer's pod passes them and nothing else.`,
    '',
    table(
      [
        'fleet',
        'errors (per round)',
        'errors by source (per round)',
        'rollout: first deletion → last old pod gone',
        'of which first → last deletion',
        'drain per pod: hooks start → Envoy released',
        'held for nothing per pod: last answer → Envoy SIGTERM',
        'drains ended by themselves / at the timeout',
        'rollout ours/peer',
        'drain ours/peer',
        'held ours/peer',
      ],
      rows,
    ),
    '',
    "\"held for nothing\": from the last request the application answered through that pod (its HAProxy slot) to Envoy's SIGTERM; only idle connections (HAProxy's pool, the scraper) were left in between. In the Deployments' rollouts the deletions are paced by the new pods becoming ready (each a pod start on this busy machine), the same for every manager, and the rollout is about those deletions plus one drain: the ratio can only be as low as that drain allows on top of them. In the DaemonSet's, each pod's drain, exit and its successor's start come one after another: the ratio is that of drain + exit + start. A drain \"at the timeout\" lasted its drain timeout (Contour: was cut at the grace period). Contour's Envoy closes a connection idle for 60 s (the idle_timeout of its connection managers), so where its one-by-one rollout reaches a pod whose idle connections had been idle that long, Contour's own manager's drain ends by itself. HAProxy's column sums econ, eresp, srv_abrt, retries and the 5xx its frontends sent.",
    ...(errorNotes.length === 0 ? [] : ['', 'What the clients saw:', '', ...errorNotes]),
  ].join('\n');
}

export const fleetPeers: Scenario = { name: 'fleet-peers', title: '14. A fleet rollout with the peers’ own managers and ours', run };
