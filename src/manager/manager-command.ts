// `envoy-shutdown-manager shutdown-manager`: the sidecar's long-running process.
import type { Server } from 'node:http';
import type { ManagerConfig } from '../config.js';
import { formatDuration } from '../duration.js';
import { ExitCode, UsageError } from '../errors.js';
import type { Logger } from '../log.js';
import { checkReadyFileDirectory, removeReadyFile } from '../ready-file.js';
import { ReadyWatch } from './ready-watch.js';
import { createManagerServer } from './server.js';

export async function runManager(config: ManagerConfig, log: Logger, stop: Promise<NodeJS.Signals>): Promise<ExitCode> {
  await checkReadyFileDirectory(config.readyFile);
  const readyWatch = new ReadyWatch(config.readyFile);
  const manager = createManagerServer({ ...config, readyWatch, log });
  // Bind first: a second instance that cannot get the port must not touch the first one's file.
  await listen(manager.server, config.host, config.port);
  // An emptyDir outlives container restarts: a file from an earlier run must never release Envoy
  // early. Removed synchronously, before the event loop can hand us a first request.
  if (removeReadyFile(config.readyFile)) {
    log.warn({ readyFile: config.readyFile }, 'removed a ready file left by an earlier run');
  }
  log.info(
    {
      host: config.host ?? 'all interfaces',
      port: boundPort(manager.server),
      readyFile: config.readyFile,
      readyTimeout: formatDuration(config.readyTimeoutMs),
      maxWaiters: config.maxWaiters,
    },
    'shutdown manager listening',
  );

  const signal = await stop;
  manager.server.close();
  manager.server.closeIdleConnections();
  log.info({ signal, waiting: manager.waiting }, 'stopping: no longer accepting connections; open waiters are still answered');
  await manager.drained();
  readyWatch.close();
  log.info('shutdown manager stopped');
  return ExitCode.Drained;
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
