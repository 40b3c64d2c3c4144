// `envoy-shutdown-manager shutdown-manager`: the sidecar's long-running process.
import type { Server } from 'node:http';
import type { ShutdownConfig } from '../drain/drain-config.js';
import { clearEnvoyPrestop, recordEnvoyPrestop } from '../handoff/envoy-prestop.js';
import { checkReadyFileDirectory, checkReadyFileReplaceable, readReadyReport, removeReadyFile } from '../handoff/ready-file.js';
import { formatDuration } from '../shared/duration.js';
import { ExitCode, errorMessage, exitCodeFor, UsageError } from '../shared/errors.js';
import type { Logger } from '../shared/log.js';
import { DrainWatchdog } from './drain-watchdog.js';
import { type FinalScrapeSettings, finalScrapeDeadline } from './final-scrape.js';
import { hookTokenCheck } from './hook-token.js';
import type { ManagerConfig } from './manager-config.js';
import type { ReadyContent } from './ready-watch.js';
import { ReadyWatch } from './ready-watch.js';
import { createManagerServer, type DrainRunner, type ManagerServer } from './server.js';

export async function runManager(config: ManagerConfig, log: Logger, stop: Promise<NodeJS.Signals>): Promise<ExitCode> {
  await checkReadyFileDirectory(config.readyFile);
  const events = await drainEvents(config, log);
  // When Envoy's preStop hook last reached the manager: the termination's start, as kubelet runs the hooks at once.
  let hookArrivedAt: number | undefined;
  const runDrain = config.drain === undefined ? undefined : drainJoiningInFlight(config.drain, config.readyFile, log);
  const manager = createManagerServer({
    ...config,
    readyWatch: new ReadyWatch(config.readyFile),
    watchdog: new DrainWatchdog(config.readyFile, config.drainStartTimeoutMs),
    carriesHookToken: config.hookToken === undefined ? undefined : hookTokenCheck(config.hookToken),
    // The envoy-prestop record lasts only while Envoy's hook is held here: throughout a real termination, but
    // not after Envoy's own liveness restart has come and gone.
    onEnvoyPrestop: (waiting) => {
      if (!waiting) return clearEnvoyPrestop(config.readyFile);
      hookArrivedAt = Date.now();
      recordEnvoyPrestop(config.readyFile).catch((error: unknown) => log.error({ err: errorMessage(error) }, "could not record envoy's preStop hook"));
    },
    runDrain:
      runDrain === undefined
        ? undefined
        : () => {
            hookArrivedAt = Date.now();
            return runDrain();
          },
    ...(events === undefined ? {} : { onDrain: events }),
    log,
  });
  // Bind first: a second instance that cannot get the port must not touch the first one's files.
  await listen(manager.server, config.host, config.port);
  // An emptyDir outlives container restarts: a file from an earlier run must never release Envoy
  // early, nor pass for a fresh preStop hook. Removed synchronously, before a first request.
  checkReadyFileReplaceable(config.readyFile);
  if (removeReadyFile(config.readyFile)) {
    log.warn({ readyFile: config.readyFile }, 'removed a ready file left by an earlier run');
  }
  clearEnvoyPrestop(config.readyFile);
  log.info(describeManager(config, boundPort(manager.server)), 'shutdown manager listening');
  const signal = await stop;
  const stoppedAt = Date.now();
  await stopManager(manager, config, signal, log);
  if (config.finalScrape !== undefined) await stayForFinalScrape(manager, config.finalScrape, { stoppedAt, hookArrivedAt }, log);
  // An Event still on its way gets its bounded time: the pod's grace period has room for it.
  await events?.settled();
  log.info({ exitCode: ExitCode.Success }, 'shutdown manager stopped');
  return ExitCode.Success;
}

/** The configuration as the start-up log line shows it (the hook token only as set or not). */
function describeManager(config: ManagerConfig, port: number | undefined): Record<string, unknown> {
  return {
    host: config.host ?? 'all interfaces',
    port,
    readyFile: config.readyFile,
    readyTimeout: formatDuration(config.readyTimeoutMs),
    drainStartTimeout: formatDuration(config.drainStartTimeoutMs),
    maxWaiters: config.maxWaiters,
    hookToken: config.hookToken === undefined ? 'none' : 'set',
    drainEndpoint: config.drain !== undefined,
    events: config.events === undefined ? 'off' : config.events.kind === 'on' ? 'on' : `none will be sent: ${config.events.why}`,
    finalScrapeTimeout: formatDuration(config.finalScrape?.timeoutMs ?? 0),
    ...(config.finalScrape?.gracePeriodMs === undefined ? {} : { terminationGracePeriod: formatDuration(config.finalScrape.gracePeriodMs) }),
  };
}

/**
 * Stops accepting (or, staying for a final scrape, serves /metrics alone), answers every held
 * /shutdown/ready (with the drain report if the ready file is there by now), and waits for the answers.
 */
async function stopManager(manager: ManagerServer, config: ManagerConfig, signal: NodeJS.Signals, log: Logger): Promise<void> {
  if (config.finalScrape === undefined) {
    closeServer(manager.server);
    log.info({ signal, pending: manager.pending }, 'stopping: no longer accepting connections');
  } else {
    manager.serveOnlyMetrics();
    log.info({ signal, pending: manager.pending }, 'stopping: serving /metrics alone');
  }
  const waiters = manager.waiting;
  // One last look: the drain may have written the file just now.
  const content = waiters === 0 ? undefined : await readReadyReport(config.readyFile);
  if (waiters > 0 && content === undefined) {
    // kubelet stops the sidecar only after its own preStop hook (the drain) returned: with no
    // ready file by now none is coming, and holding Envoy would only burn the grace period.
    log.error({ signal, waiters }, 'stopped before the ready file appeared: releasing envoy undrained, every /shutdown/ready waiter answered 500 now');
  } else if (waiters > 0) {
    log.info({ signal, waiters }, 'stopping: answering every /shutdown/ready waiter with the drain report');
  }
  manager.releaseWaiters(content);
  await manager.drained();
}

/**
 * Envoy is released by now: the counters are final. Stays until every scraper that read them
 * within the timeout has read them as they are now, or the deadline, then stops accepting.
 */
async function stayForFinalScrape(
  manager: ManagerServer,
  settings: FinalScrapeSettings,
  { stoppedAt, hookArrivedAt }: { readonly stoppedAt: number; readonly hookArrivedAt: number | undefined },
  log: Logger,
): Promise<void> {
  const version = manager.metricsVersion;
  const since = stoppedAt - settings.timeoutMs;
  const behind = manager.scrapes.behind(version, since);
  const deadline = finalScrapeDeadline(settings, stoppedAt, hookArrivedAt);
  if (behind.length > 0 && deadline === undefined) {
    log.warn(
      { scrapers: behind.length },
      "final scrape: not waited for, Envoy's preStop hook never reached the manager, so what is left of the grace period is unknown",
    );
  } else if (behind.length > 0 && deadline !== undefined) {
    const startedAt = Date.now();
    log.info({ scrapers: behind.length, until: formatDuration(deadline - startedAt) }, 'final scrape: serving /metrics until the final counters are read');
    const read = await manager.scrapes.caughtUp(version, since, deadline);
    const fields = { waitedMs: Date.now() - startedAt, scrapers: behind.length };
    if (read) log.info(fields, 'final scrape: the final counters were read');
    else log.warn({ ...fields, behind: manager.scrapes.behind(version, since).length }, 'final scrape: not every scraper read the final counters in time');
  }
  closeServer(manager.server);
}

function closeServer(server: Server): void {
  server.close();
  server.closeIdleConnections();
}

/**
 * The drain of native-sidecar mode, run in this process. Callers while it runs join it; a call
 * after it ended drains again: Envoy's hook also runs before a liveness restart of Envoy, and the
 * pod's real termination later must not get that old result instead of a drain.
 */
function drainJoiningInFlight(config: ShutdownConfig, readyFile: string, log: Logger): DrainRunner {
  let inFlight: ReturnType<DrainRunner> | undefined;
  return () =>
    (inFlight ??= (async () => {
      const drainLog = log.child({ component: 'shutdown' });
      let exitCode: ExitCode;
      try {
        // Loaded at the first drain: a manager's start-up (classic mode) has no use for it.
        const { runShutdown } = await import('../drain/shutdown-command.js');
        // Never interrupted: kubelet stops a native sidecar only after Envoy's hook, this drain, returned.
        exitCode = await runShutdown(config, drainLog, AbortSignal.any([]));
      } catch (error) {
        // A usage error found at drain time (the ready-file path): the hook gets a 500, the log says why.
        exitCode = exitCodeFor(error);
        drainLog.error({ err: errorMessage(error), exitCode }, 'shutdown finished');
      }
      const report = await readReadyReport(readyFile);
      return { ok: exitCode === ExitCode.Drained, report: typeof report === 'object' ? report : { exitCode }, content: report };
    })().finally(() => (inFlight = undefined)));
}

/**
 * The manager sends each drain's Event, not the drain: it is the process that releases Envoy, so
 * it knows when that happened, sends only after it, and outlives the hook, so neither the hook's
 * return (the sidecar's SIGTERM) nor, in native-sidecar mode, Envoy's answer waits for the API server.
 */
async function drainEvents(config: ManagerConfig, log: Logger): Promise<(((content: ReadyContent) => void) & { settled(): Promise<void> }) | undefined> {
  if (config.events?.kind !== 'on') return undefined;
  // Loaded only when on: HTTPS and crypto cost an idle manager about 2 MiB.
  const { DrainEvents } = await import('../events/drain-events.js');
  const events = new DrainEvents(config.events.target, log.child({ component: 'events' }));
  return Object.assign((content: ReadyContent) => events.report(content), { settled: () => events.settled() });
}

function boundPort(server: Server): number | undefined {
  const address = server.address();
  return typeof address === 'object' && address !== null ? address.port : undefined;
}

function listen(server: Server, host: string | undefined, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException): void => {
      const where = `${host ?? 'all interfaces'} port ${port}`;
      if (error.code === 'EADDRINUSE') reject(new UsageError(`cannot listen on ${where}: the port is already in use`));
      else if (error.code === 'EADDRNOTAVAIL' || error.code === 'EAFNOSUPPORT') reject(new UsageError(`cannot listen on ${where}: no such local address`));
      else if (error.code === 'EACCES') reject(new UsageError(`cannot listen on ${where}: permission denied (ports below 1024 need privileges)`));
      else reject(error);
    };
    server.once('error', onError);
    // No host: Node listens on :: (IPv4 and IPv6) when the kernel has IPv6, else on 0.0.0.0.
    server.listen({ port, ...(host === undefined ? {} : { host }) }, () => {
      server.off('error', onError);
      resolve();
    });
  });
}
