// 15. What the final scrape costs a rollout: the chart's fleet (test/support/fleet/fleet-run.ts:
// real Envoy 1.40 in podman pods behind HAProxy under load, each deleted pod terminated as a 1.33
// kubelet does) with a real Prometheus scraping every pod's manager at 15 s, the chart's PodMonitor
// set to it (so each manager stays for its final scrape), against the same fleet without the
// PodMonitor. On the pod network (a Deployment: nothing waits for an old pod to be gone) and with
// hostNetwork (each new pod takes its node's ports only once the old pod has exited). Rounds interleaved.

import { buildFixtures } from '../test/support/fixtures.js';
import { errorCount } from '../test/support/fleet/error-count.js';
import type { FleetInput, FleetOutput } from '../test/support/fleet/fleet-run.js';
import { LONG_REQUEST_MS, MIN_DRAIN_S, REPLICAS, runFleetCase, TEST_CHECK } from '../test/support/fleet/fleet-settings.js';
import { ensureHey } from '../test/support/fleet/hey.js';
import { buildAmd64Images } from '../test/support/podman/images.js';
import { removeRun } from '../test/support/podman/podman-run.js';
import { envoyVersion } from '../test/support/real-envoy/binary.js';
import { formatMs, progress, type Scenario, summarize, table } from './support/harness.js';

/** FLEET_FINAL_SCRAPE_ROUNDS overrides, for a quick look while iterating. */
const ROUNDS = Number(process.env.FLEET_FINAL_SCRAPE_ROUNDS ?? 3);
/** The scrape interval the issue's alerts are proven at, and a common one. */
const SCRAPE_INTERVAL_MS = 15_000;

interface Fleet {
  readonly network: FleetInput['network'];
  readonly finalScrape: boolean;
}

const FLEETS: readonly Fleet[] = [
  { network: 'pod', finalScrape: false },
  { network: 'pod', finalScrape: true },
  { network: 'hostNetwork', finalScrape: false },
  { network: 'hostNetwork', finalScrape: true },
];

const label = (fleet: Fleet): string =>
  `${fleet.network === 'pod' ? 'pod network' : 'hostNetwork'}, ${fleet.finalScrape ? `final scrape (scraped every ${SCRAPE_INTERVAL_MS / 1_000} s)` : 'no final scrape'}`;

interface Figures {
  readonly errors: number;
  /** First deletion to the last old pod gone. */
  readonly rolloutMs: number;
  /** First deletion to the last new pod ready: when the workload is all new. */
  readonly replacedMs: number;
  /** Per pod: from Envoy's exit to the pod's (the manager's stay). */
  readonly afterEnvoyMs: readonly number[];
  /** Per pod: deletion to the exit of its last container. */
  readonly lifetimeMs: readonly number[];
  /** Per pod: deletion to Envoy's SIGTERM (its release). */
  readonly releaseMs: readonly number[];
}

function figures(out: FleetOutput): Figures {
  const at = (pod: string, kind: string): number => out.rollout.events.find((e) => e.pod === pod && e.kind === kind)?.t ?? Number.NaN;
  const deleted = out.rollout.events.filter((e) => e.kind === 'deleted').map((e) => e.t);
  const exited = out.rollout.drains.map((d) => at(d.pod, 'exited'));
  const ready = out.rollout.events.filter((e) => e.kind === 'ready' && e.pod.startsWith('new-')).map((e) => e.t);
  return {
    errors: errorCount(out),
    rolloutMs: Math.max(...exited) - Math.min(...deleted),
    replacedMs: Math.max(...ready) - Math.min(...deleted),
    afterEnvoyMs: out.rollout.drains.map((d) => d.afterEnvoyMs),
    lifetimeMs: out.rollout.drains.map((d) => d.exitMs),
    releaseMs: out.rollout.drains.map((d) => d.envoySigtermAt - (out.rollout.startedAt + at(d.pod, 'deleted'))),
  };
}

async function run(): Promise<string> {
  const log = (line: string): void => progress('fleet-final-scrape', line);
  await buildFixtures();
  const built = await buildAmd64Images(log);
  const runId = `bench${process.pid}${Date.now().toString(36)}`;
  const context = { images: { manager: built.manager, managerTag: built.managerTag, envoy: built.envoy }, runId, heyBinary: ensureHey() };
  const results = new Map<Fleet, Figures[]>(FLEETS.map((f) => [f, []]));
  let versions = '';
  try {
    for (let round = 0; round < ROUNDS; round += 1) {
      for (const fleet of round % 2 === 0 ? FLEETS : [...FLEETS].reverse()) {
        const fleetCase = {
          mode: 'health-check',
          network: fleet.network,
          hooks: true,
          ...(fleet.finalScrape ? { scrapeIntervalMs: SCRAPE_INTERVAL_MS } : {}),
        } as const;
        const out = await runFleetCase(fleetCase, context);
        const measured = figures(out);
        results.get(fleet)?.push(measured);
        versions = `HAProxy ${out.versions.haproxy}, hey ${out.versions.hey}`;
        log(
          `round ${round + 1}/${ROUNDS}: ${label(fleet)}: ${measured.errors} errors, rollout ${formatMs(measured.rolloutMs)}, after Envoy ${measured.afterEnvoyMs.map((ms) => formatMs(ms)).join(' ')}`,
        );
      }
    }
  } finally {
    await removeRun(runId);
  }

  const all = (fleet: Fleet, pick: (f: Figures) => readonly number[]): number[] => (results.get(fleet) ?? []).flatMap(pick);
  const spread = (values: readonly number[]): string => {
    const s = summarize(values);
    return `${formatMs(s.median)} (max ${formatMs(s.max)})`;
  };
  const median = (values: readonly number[]): number => summarize(values).median;
  const baseline = (fleet: Fleet): Fleet => FLEETS.find((f) => f.network === fleet.network && !f.finalScrape) ?? fleet;
  const versus = (fleet: Fleet, pick: (f: Figures) => number): string =>
    fleet.finalScrape ? (median(all(fleet, (f) => [pick(f)])) / median(all(baseline(fleet), (f) => [pick(f)]))).toFixed(2) : '1.00';
  const rows = FLEETS.map((fleet) => {
    const extra = fleet.finalScrape ? formatMs(median(all(fleet, (f) => f.lifetimeMs)) - median(all(baseline(fleet), (f) => f.lifetimeMs))) : '—';
    return [
      label(fleet),
      (results.get(fleet) ?? []).map((f) => String(f.errors)).join(', '),
      spread(all(fleet, (f) => f.releaseMs)),
      spread(all(fleet, (f) => f.afterEnvoyMs)),
      spread(all(fleet, (f) => f.lifetimeMs)),
      extra,
      spread(all(fleet, (f) => [f.replacedMs])),
      versus(fleet, (f) => f.replacedMs),
      spread(all(fleet, (f) => [f.rolloutMs])),
      versus(fleet, (f) => f.rolloutMs),
    ];
  });
  return [
    `Real Envoy ${await envoyVersion()}, ${versions}, Prometheus from Debian's package. ${ROUNDS} rounds, the fleets interleaved (order reversed every other round); figures over every pod of every round: median (max).`,
    '',
    `Each fleet: ${REPLICAS} of the chart's pods in podman (minimum drain ${MIN_DRAIN_S} s), one rolling update as the chart renders it (pod network: maxSurge 1, maxUnavailable 0; hostNetwork: maxSurge 0, maxUnavailable 1, each new pod on its old pod's node ports once that one has exited), HAProxy in front checking each pod's readiness listener every ${TEST_CHECK.intervalMs} ms, hey and HTTP/1.1 and HTTP/2 clients through it, long requests (${LONG_REQUEST_MS / 1_000} s) at each deletion. With the final scrape: a real Prometheus scrapes each pod's manager every ${SCRAPE_INTERVAL_MS / 1_000} s from its admission until it exits (its targets file follows the pods, as a PodMonitor's discovery does), every old pod scraped before the first deletion, and the chart's \`metrics.podMonitor\` enabled at that interval, so the manager gets \`ENVOY_SHUTDOWN_FINAL_SCRAPE_TIMEOUT=${SCRAPE_INTERVAL_MS / 1_000 + 5}s\` and the grace period. Without it, the chart as rendered by default.`,
    '',
    table(
      [
        'fleet',
        'errors (per round)',
        "deletion → Envoy's SIGTERM (its release), per pod",
        "Envoy's exit → the pod's (the manager's stay), per pod",
        'deletion → pod gone, per pod',
        'extra lifetime (median vs. without)',
        'first deletion → last new pod ready',
        'new pods ready vs. without',
        'first deletion → last old pod gone',
        'old pods gone vs. without',
      ],
      rows,
    ),
    '',
    `The stay ends at each pod's next scrape after its drain: Prometheus scrapes a target once per interval at a fixed offset, so it lasts between nothing and one interval, whatever the load; here each rollout begins right after its old pods' first scrapes, so the first pods' stays are longer than a random phase would give. Envoy's release (its SIGTERM) does not move: the stay begins only after it. A Deployment on the pod network creates its new pods without waiting for old ones to be gone: its new pods are ready as soon as without, and only the last old pod's stay is added to the time until every old pod is gone. With hostNetwork each replacement waits for its old pod's exit, so the rollout takes longer by about one stay per pod, one after another (a DaemonSet without surge replaces its pods the same way).`,
  ].join('\n');
}

export const fleetFinalScrape: Scenario = { name: 'fleet-final-scrape', title: '15. The final scrape: what it costs a rollout', run };
