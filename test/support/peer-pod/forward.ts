// A byte-for-byte TCP forwarder between two listening/connecting ends, one of which may be a Unix
// socket: a Unix socket path is reachable from both network namespaces (the filesystem is shared),
// so it carries connections into and out of a pod that has only its own loopback. Each accepted
// connection gets exactly one connection on the other side; a close or reset is passed on as such.
import { connect, createServer, type Server, type Socket } from 'node:net';

export type End = { readonly host: string; readonly port: number } | { readonly path: string };

/** Listens on `from` and forwards every connection to `to`; resolves once listening. */
export function forward(from: End, to: End): Promise<Server> {
  const server = createServer({ allowHalfOpen: true }, (inbound) => {
    const outbound = connect({ ...to, allowHalfOpen: true });
    join(inbound, outbound, !('path' in to));
    join(outbound, inbound, !('path' in from));
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(from, () => resolve(server));
  });
}

/** `toIsTcp`: only a TCP socket can be reset; Node throws for a Unix socket, which is closed instead. */
function join(from: Socket, to: Socket, toIsTcp: boolean): void {
  from.pipe(to);
  // A reset (or a failed connect) on one side is a reset on the other, as a client would see it.
  from.on('error', () => {
    if (to.destroyed) return;
    if (toIsTcp) to.resetAndDestroy();
    else to.destroy();
  });
  from.on('close', (hadError) => {
    if (!hadError && !to.destroyed && to.writableEnded) to.destroy();
  });
}

/** The port a server listening on TCP got. */
export function portOf(server: Server): number {
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('not a TCP server');
  return address.port;
}
