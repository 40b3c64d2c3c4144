// One rolling update of a fleet of the chart's pods behind HAProxy, under load, inside the private
// network namespace the fleet runner lives in (netns.ts): the application (a plain upstream),
// N podman pods of the chart (the project's image and real Envoy 1.40, terminated as a 1.33 kubelet
// does; or a peer's rendered pod, peer-fleet-pod.ts), HAProxy in front of them, and the clients:
// hey at a constant rate and HTTP/1.1 clients through HAProxy's HTTP/1.1 frontend, HTTP/2 clients
// through its h2c frontend (h2c to the pods too), long requests put in flight before each deletion,
// and idle pooled connections. Returns what every client and HAProxy counted, and the rollout's
// timeline.

import { helmTemplate, parseManifests } from '../chart/helm.js';
import { type RenderedPod, readPod } from '../chart/manifests.js';
import { terminatePod } from '../podman/podman-kubelet.js';
import { RunObjects } from '../podman/podman-objects.js';
import type { PodmanPod } from '../podman/podman-pod.js';
import { startPodmanPod } from '../podman/podman-pod.js';
import { pollUntil } from '../poll.js';
import { freePort } from '../ports.js';
import { type PrometheusServer, type ScrapeTarget, startPrometheus } from '../prometheus-server.js';
import { type Connection, idleHttp1, idleHttp2, longRequest, type SideResult } from '../protocols/clients.js';
import { startUpstream } from '../real-envoy/upstream.js';
import { Traffic } from '../traffic/traffic.js';
import { Haproxy, haproxyVersion, type ServerStats } from './haproxy.js';
import { type BalancerMode, type HealthCheck, HTTP1_BACKEND, SERVER_HEADER, slotName } from './haproxy-config.js';
import { HEY_VERSION, type HeyReport, startHey } from './hey.js';
import { newPodAfterExit, PEER_SHAPES, type PeerPodChoice, peerStrategy, startPeerFleetPod } from './peer-fleet-pod.js';
import { type PodTraffic, podTraffic } from './pod-traffic.js';
import { type FleetPod, type RolloutReport, rollout } from './rollout.js';
import { CHART_STRATEGIES, type Strategy } from './rollout-plan.js';

export interface FleetInput {
  readonly mode: BalancerMode;
  /** `hostNetwork`: the chart's hostNetwork values (and their rollout strategy). */
  readonly network: 'pod' | 'hostNetwork';
  /** false: the pods have no preStop hooks (the control). */
  readonly hooks: boolean;
  readonly replicas: number;
  readonly minDrainSeconds: number;
  readonly healthCheck: HealthCheck;
  /** Endpoints mode: how long after the deletion the balancer takes the pod out. */
  readonly removeLagMs: number;
  readonly images: { readonly manager: string; readonly managerTag: string; readonly envoy: string };
  readonly runId: string;
  readonly heyBinary: string;
  /** How long a long request is held by the application. */
  readonly longRequestMs: number;
  /** A peer's rendered pod instead of the chart's (hooks always on). */
  readonly peerPod?: PeerPodChoice;
  /** The chart's `shutdown` values instead of the tests' short ones. */
  readonly chartShutdown?: Readonly<Record<string, number>>;
  /**
   * Idle keep-alive connections on each pod: a metrics scraper's on its stats listener (idle between
   * scrapes), and a balancer's pooled HTTP/1.1 and HTTP/2 connections on its traffic listener, kept
   * open whatever the pod's health (cloud balancers keep their pools; HAProxy closes its own).
   */
  readonly podIdle?: boolean;
  /** Bounds the rollout (DEFAULT_ROLLOUT_TIMEOUT_MS); hey's own bound is 30 s more. */
  readonly rolloutTimeoutMs?: number;
  /**
   * A real Prometheus scrapes every chart pod's manager at this interval, following the pods as a
   * PodMonitor does, and the chart's PodMonitor is set to it (so the managers stay for their final scrape).
   */
  readonly scrapeIntervalMs?: number;
}

export interface FleetOutput {
  readonly input: Omit<FleetInput, 'images' | 'runId' | 'heyBinary'>;
  readonly versions: { readonly haproxy: string; readonly hey: string };
  readonly strategy: Strategy;
  readonly rollout: Omit<RolloutReport, 'pods'>;
  /** New pods take the node ports of exited ones (hostNetwork). */
  readonly inPlace: boolean;
  /** Per deleted pod: from its deletion until HAProxy took it out (null: it never did). */
  readonly balancerLetGoMs: Readonly<Record<string, number | null>>;
  /** Per pod, old and new: the application's requests it served. */
  readonly podTraffic: Readonly<Record<string, PodTraffic>>;
  readonly hey: HeyReport;
  readonly clients: { readonly http1: ClientCount; readonly http2: ClientCount };
  readonly longRequests: { readonly sent: number; readonly failures: readonly string[] };
  readonly idleConnections: { readonly opened: number; readonly closedByServer: number };
  /** The idle connections on the pods (`podIdle`): how many were opened, and how many the pods closed before the run ended. */
  readonly podIdle: { readonly opened: number; readonly closedByServer: number };
  /**
   * Per deleted pod: from the last request it answered (the application's last answer through its
   * slot) to Envoy's SIGTERM, the time the pod was held with nothing left to serve. Null in place
   * (hostNetwork), where a new pod takes over the slot.
   */
  readonly heldForNothingMs: Readonly<Record<string, number | null>>;
  readonly haproxy: { readonly totals: HaproxyTotals; readonly servers: readonly ServerStats[] };
}

interface ClientCount {
  readonly succeeded: number;
  readonly failures: readonly string[];
}

/** HAProxy's error and retry counters, summed over every server of both backends, and the 5xx its frontends sent. */
interface HaproxyTotals {
  readonly econ: number;
  readonly eresp: number;
  readonly wretr: number;
  readonly wredis: number;
  readonly srvAbrt: number;
  readonly frontend5xx: number;
}

const TOKEN = 'fleet-test-hook-token-0123456789';
/** Bounds a rollout unless the input says otherwise. */
export const DEFAULT_ROLLOUT_TIMEOUT_MS = 120_000;
/** The chart's listener port of the application. */
const APP_PORT = 8080;
/** Bounds the wait for a request through every new pod after the rollout (a broken last pod shows). */
const AFTER_ROLLOUT_TIMEOUT_MS = 15_000;

/** The chart's listener, routed to the application with no route timeout (long requests). */
function appValues(upstreamPort: number): Record<string, unknown> {
  const hcm = {
    '@type': 'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager',
    stat_prefix: 'ingress',
    codec_type: 'AUTO',
    route_config: {
      name: 'app',
      virtual_hosts: [{ name: 'app', domains: ['*'], routes: [{ match: { prefix: '/' }, route: { cluster: 'app', timeout: '0s' } }] }],
    },
    http_filters: [{ name: 'envoy.filters.http.router', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router' } }],
  };
  return {
    listeners: [
      {
        name: 'ingress',
        address: { socket_address: { address: '0.0.0.0', port_value: APP_PORT } },
        filter_chains: [{ filters: [{ name: 'envoy.filters.network.http_connection_manager', typed_config: hcm }] }],
      },
    ],
    clusters: [
      {
        name: 'app',
        type: 'STATIC',
        connect_timeout: '1s',
        load_assignment: {
          cluster_name: 'app',
          endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: upstreamPort } } } }] }],
        },
      },
    ],
  };
}

async function render(input: FleetInput, upstreamPort: number): Promise<RenderedPod> {
  const values = {
    hookToken: { value: TOKEN },
    // A short drain for the test; the checks (or the endpoint follower) must let go well before it ends.
    shutdown: input.chartShutdown ?? { minDrainDuration: input.minDrainSeconds, quietPeriod: 0.5, checkInterval: 0.2, drainTimeout: 10 },
    ...(input.network === 'hostNetwork' ? { hostNetwork: true } : {}),
    ...(input.scrapeIntervalMs === undefined ? {} : { metrics: { podMonitor: { enabled: true, interval: `${input.scrapeIntervalMs / 1_000}s` } } }),
    ...appValues(upstreamPort),
  };
  const result = await helmTemplate({ values });
  if (result.code !== 0) throw new Error(`helm template failed: ${result.stderr}`);
  return readPod(parseManifests(result.stdout));
}

/** The strategy the chart rendered: the Deployment's rollingUpdate. */
function renderedStrategy(rendered: RenderedPod): Strategy {
  const rolling = rendered.deployment.spec?.strategy?.rollingUpdate;
  const number = (value: number | string | undefined): number => {
    if (typeof value !== 'number') throw new Error(`the chart's rollingUpdate uses ${String(value)}; the fleet test models whole numbers only`);
    return value;
  };
  return { maxSurge: number(rolling?.maxSurge), maxUnavailable: number(rolling?.maxUnavailable) };
}

export async function runFleet(input: FleetInput): Promise<FleetOutput> {
  const versions = { haproxy: haproxyVersion(), hey: HEY_VERSION };
  const objects = new RunObjects(input.runId);
  const upstream = await startUpstream({ tagHeader: SERVER_HEADER });
  const cleanups: Array<() => Promise<unknown>> = [() => upstream.close(), () => objects.removeAll()];
  try {
    const pods = input.peerPod === undefined ? await chartPods(input, upstream.port, objects) : peerPods(input.peerPod, input, upstream.port, objects);
    const { strategy } = pods;
    const rolloutTimeoutMs = input.rolloutTimeoutMs ?? DEFAULT_ROLLOUT_TIMEOUT_MS;
    const inPlace = input.network === 'hostNetwork';
    const http1Port = await freePort();
    const http2Port = await freePort();
    const haproxy = await Haproxy.start({
      mode: input.mode,
      slots: inPlace ? input.replicas : 2 * input.replicas,
      http1Port,
      http2Port,
      healthCheck: input.healthCheck,
    });
    cleanups.unshift(() => haproxy.stop());
    const podIdle: Connection[] = [];
    cleanups.unshift(() => Promise.all(podIdle.map((c) => c.close())));
    const scraper = input.scrapeIntervalMs === undefined ? undefined : await ManagerScraper.start(input.scrapeIntervalMs, pods.managerPort);
    if (scraper !== undefined) cleanups.unshift(() => scraper.stop());

    const startPod = async (name: string, slot: number): Promise<FleetPod> => ({ name, slot, pod: await pods.start() });
    const admit = async (pod: FleetPod): Promise<void> => {
      scraper?.add(pod);
      await haproxy.admit(pod.slot, { traffic: pod.pod.ports.port(pods.trafficPort), ready: pod.pod.ports.port(pods.readyPort) });
      if (input.podIdle === true) {
        const traffic = pod.pod.ports.port(pods.trafficPort);
        podIdle.push(await idleHttp1(pod.pod.ports.port(pods.stats.port), pods.stats.path), await idleHttp1(traffic), await idleHttp2(traffic));
      }
    };
    const initial = await Promise.all(Array.from({ length: input.replicas }, (_, slot) => startPod(`old-${slot}`, slot)));
    for (const pod of initial) await admit(pod);
    if (input.mode === 'health-check') for (const pod of initial) await haproxy.waitUp(pod.slot, 10_000);
    // Scraped before any deletion, as a pod that has lived a scrape interval is: its manager then has a scraper to stay for.
    await scraper?.scrapedAll(initial);

    // The clients, all through HAProxy.
    const hey = startHey(input.heyBinary, {
      url: `http://127.0.0.1:${http1Port}/`,
      workers: 8,
      ratePerWorker: 25,
      maxSeconds: Math.ceil(rolloutTimeoutMs / 1_000) + 30,
      timeoutSeconds: 10,
    });
    const http1 = await Traffic.start({
      terminating: { host: '127.0.0.1', port: http1Port },
      healthy: { host: '127.0.0.1', port: http1Port },
      http1Clients: 3,
      http2Clients: 0,
      thinkTimeMs: 10,
    });
    const http2 = await Traffic.start({
      terminating: { host: '127.0.0.1', port: http2Port },
      healthy: { host: '127.0.0.1', port: http2Port },
      http1Clients: 0,
      http2Clients: 2,
      streamsPerSession: 2,
      thinkTimeMs: 10,
    });
    const idle: Connection[] = [await idleHttp1(http1Port), await idleHttp1(http1Port), await idleHttp2(http2Port)];
    const long: Array<Promise<SideResult>> = [];
    const deletedAt = new Map<string, { slot: number; at: number }>();

    let report: RolloutReport;
    try {
      report = await rollout(
        initial,
        {
          startPod,
          admit,
          remove: (pod) => haproxy.remove(pod.slot),
          terminate: async (pod) => {
            const termination = await terminatePod(pod.pod, { hooks: input.hooks });
            scraper?.remove(pod);
            return termination;
          },
          beforeDelete: async (pod) => {
            deletedAt.set(pod.name, { slot: pod.slot, at: Date.now() });
            // Enough long requests on each protocol that round robin puts some on every pod.
            const batch = Array.from({ length: input.replicas }, () => [
              longRequest(http1Port, 'http1', `/slow/${input.longRequestMs}`, 30_000),
              longRequest(http2Port, 'http2', `/slow/${input.longRequestMs}`, 30_000),
            ]).flat();
            long.push(...batch);
            // Held by the application, or (a pod already gone, in the control) failed: either way, no wait without end.
            await Promise.race([upstream.slowInFlight(batch.length), Promise.all(batch)]);
          },
        },
        {
          replicas: input.replicas,
          strategy,
          inPlace,
          afterExit: pods.afterExit,
          removeLagMs: input.mode === 'endpoints' ? input.removeLagMs : undefined,
          timeoutMs: rolloutTimeoutMs,
        },
      );
      // The clients keep going until each pod of the new fleet has served a request since the rollout ended.
      const ended = Date.now();
      const newSlots = report.pods.filter((p) => !initial.includes(p)).map((p) => p.slot);
      const servedSince = (slot: number): boolean => (upstream.arrivals().get(slotName(slot)) ?? []).some((at) => at > ended);
      await pollUntil('a request through every new pod after the rollout', () => newSlots.every(servedSince), { timeoutMs: AFTER_ROLLOUT_TIMEOUT_MS });
    } finally {
      // Stopped whatever happened, so their processes and sockets are gone.
      await Promise.allSettled([hey.stop(), http1.stop(), http2.stop(), Promise.all(long)]);
    }
    const heyReport = await hey.stop();
    const [stats1, stats2] = [await http1.stop(), await http2.stop()];
    const longResults = await Promise.all(long);
    const idleClosed = idle.filter((c) => c.closed()).length;
    await Promise.all(idle.map((c) => c.close()));
    const podIdleClosed = podIdle.filter((c) => c.closed()).length;
    const servers = await haproxy.stats();
    const { pods: _pods, ...timeline } = report;
    const lastAnswers = upstream.lastAnswers();
    const heldForNothingMs = Object.fromEntries(
      report.drains.map((drain) => {
        const last = lastAnswers.get(slotName(report.slots[drain.pod] ?? -1));
        return [drain.pod, last === undefined || inPlace ? null : drain.envoySigtermAt - last];
      }),
    );
    // When HAProxy stopped sending new requests to each deleted pod: its first DOWN (checks failed, or maintenance) after the deletion.
    const balancerLetGoMs = Object.fromEntries(
      [...deletedAt].map(([name, { slot, at }]) => {
        const down = haproxy.stateChanges.find((c) => c.backend === HTTP1_BACKEND && c.server === slotName(slot) && c.state === 'DOWN' && c.at >= at);
        return [name, down === undefined ? null : down.at - at];
      }),
    );
    return {
      input: {
        mode: input.mode,
        network: input.network,
        hooks: input.hooks,
        replicas: input.replicas,
        minDrainSeconds: input.minDrainSeconds,
        healthCheck: input.healthCheck,
        removeLagMs: input.removeLagMs,
        longRequestMs: input.longRequestMs,
        ...(input.scrapeIntervalMs === undefined ? {} : { scrapeIntervalMs: input.scrapeIntervalMs }),
      },
      versions,
      strategy,
      rollout: timeline,
      inPlace,
      balancerLetGoMs,
      podTraffic: podTraffic(timeline, upstream.arrivals()),
      hey: heyReport,
      clients: {
        http1: { succeeded: stats1.requests.terminating + stats1.requests.healthy, failures: stats1.failures.map((f) => `${f.kind}: ${f.detail}`) },
        http2: { succeeded: stats2.requests.terminating + stats2.requests.healthy, failures: stats2.failures.map((f) => `${f.kind}: ${f.detail}`) },
      },
      longRequests: { sent: longResults.length, failures: longResults.flatMap((r) => (r.failure === undefined ? [] : [`${r.protocol}: ${r.failure}`])) },
      idleConnections: { opened: idle.length, closedByServer: idleClosed },
      podIdle: { opened: podIdle.length, closedByServer: podIdleClosed },
      heldForNothingMs,
      haproxy: { totals: totals(servers), servers: servers.filter((s) => s.server !== 'FRONTEND' && s.server !== 'BACKEND' && s.stot > 0) },
    };
  } finally {
    for (const cleanup of cleanups) await cleanup().catch(() => undefined);
  }
}

/** How the fleet's pods start, where they take traffic and answer readiness, and their workload's rollout strategy. */
interface FleetPods {
  readonly strategy: Strategy;
  /** The workload creates a new pod only once an old one has exited (a DaemonSet without surge). */
  readonly afterExit: boolean;
  readonly trafficPort: number;
  readonly readyPort: number;
  readonly stats: { readonly port: number; readonly path: string };
  /** The manager's port (its /metrics). */
  readonly managerPort: number;
  start(): Promise<PodmanPod>;
}

async function chartPods(input: FleetInput, upstreamPort: number, objects: RunObjects): Promise<FleetPods> {
  const rendered = await render(input, upstreamPort);
  const strategy = renderedStrategy(rendered);
  const expected = CHART_STRATEGIES[input.network === 'hostNetwork' ? 'hostNetwork' : 'default'];
  if (strategy.maxSurge !== expected.maxSurge || strategy.maxUnavailable !== expected.maxUnavailable)
    throw new Error(`the chart renders ${JSON.stringify(strategy)} for ${input.network}, not ${JSON.stringify(expected)}`);
  if (!input.hooks) {
    for (const c of [rendered.envoy, rendered.sidecar]) delete c.lifecycle;
  }
  const images = { [rendered.sidecar.image ?? '']: input.images.manager, [rendered.envoy.image ?? '']: input.images.envoy };
  if (`localhost/${rendered.sidecar.image}` !== input.images.managerTag)
    throw new Error(`the chart's manager image ${rendered.sidecar.image} is not ${input.images.managerTag}`);
  const listenerPort = (name: string): number => {
    const port = rendered.bootstrap.static_resources?.listeners?.find((l) => l.name === name)?.address.socket_address?.port_value;
    if (port === undefined) throw new Error(`the rendered bootstrap has no ${name} listener`);
    return port;
  };
  return {
    strategy,
    afterExit: false,
    trafficPort: APP_PORT,
    readyPort: listenerPort('ready'),
    stats: { port: listenerPort('stats'), path: '/stats/prometheus' },
    managerPort: managerPort(rendered),
    start: () => startPodmanPod(rendered, objects, images, { outsidePorts: [upstreamPort] }),
  };
}

function peerPods(choice: PeerPodChoice, input: FleetInput, upstreamPort: number, objects: RunObjects): FleetPods {
  if (!input.hooks || input.network !== 'pod') throw new Error('a peer pod runs with its hooks, in its own network namespace');
  const shape = PEER_SHAPES[choice.peer];
  const strategy = peerStrategy(choice.peer, input.replicas);
  return {
    strategy,
    afterExit: newPodAfterExit(choice.peer, strategy),
    trafficPort: shape.listenerPort,
    readyPort: shape.ready.port,
    stats: shape.stats,
    managerPort: shape.managerPort,
    start: () => startPeerFleetPod(objects, choice, input.images.envoy, upstreamPort),
  };
}

/** The manager's `shutdown-mgr` port, as the PodMonitor names it. */
function managerPort(rendered: RenderedPod): number {
  const port = rendered.sidecar.ports?.find((p) => p.name === 'shutdown-mgr')?.containerPort;
  if (port === undefined) throw new Error('the rendered manager has no shutdown-mgr port');
  return port;
}

/** A real Prometheus scraping each live pod's manager, the pods added as they are admitted and removed as they exit. */
class ManagerScraper {
  readonly #targets = new Map<string, ScrapeTarget>();

  private constructor(
    readonly prometheus: PrometheusServer,
    readonly port: number,
    readonly intervalMs: number,
  ) {}

  static async start(intervalMs: number, port: number): Promise<ManagerScraper> {
    return new ManagerScraper(await startPrometheus([], '', intervalMs), port, intervalMs);
  }

  add(pod: FleetPod): void {
    this.#targets.set(pod.name, { port: pod.pod.ports.port(this.port), labels: { pod: pod.name } });
    this.prometheus.setTargets([...this.#targets.values()]);
  }

  remove(pod: FleetPod): void {
    this.#targets.delete(pod.name);
    this.prometheus.setTargets([...this.#targets.values()]);
  }

  /** Resolves once each of `pods` was scraped successfully. */
  async scrapedAll(pods: readonly FleetPod[]): Promise<void> {
    const names = pods.map((p) => p.name);
    await pollUntil(
      'every pod scraped',
      async () => {
        const up = await this.prometheus.query('up == 1');
        return names.every((name) => up.some((sample) => sample.metric.pod === name));
      },
      { timeoutMs: 4 * this.intervalMs + 30_000, everyMs: 500 },
    );
  }

  stop(): Promise<void> {
    return this.prometheus.stop();
  }
}

function totals(stats: readonly ServerStats[]): HaproxyTotals {
  const servers = stats.filter((s) => s.server !== 'FRONTEND' && s.server !== 'BACKEND');
  const sum = (pick: (s: ServerStats) => number, rows: readonly ServerStats[] = servers): number => rows.reduce((total, s) => total + pick(s), 0);
  return {
    econ: sum((s) => s.econ),
    eresp: sum((s) => s.eresp),
    wretr: sum((s) => s.wretr),
    wredis: sum((s) => s.wredis),
    srvAbrt: sum((s) => s.srvAbrt),
    frontend5xx: sum(
      (s) => s.hrsp5xx,
      stats.filter((s) => s.server === 'FRONTEND'),
    ),
  };
}
