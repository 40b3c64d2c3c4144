// One executable, three names (busybox style): called as `envoy-gateway` or `contour` it answers
// those projects' shutdown-manager command lines, so their generated pods run this image
// unchanged; under any other name it is our own CLI. The peers' code loads only under their name:
// a hook's start-up pays for none of it.
import { basename } from 'node:path';

const PEER_NAMES = ['envoy-gateway', 'contour'] as const;
export type PeerName = (typeof PEER_NAMES)[number];

/**
 * The peer this process was called as. A single executable gets argv0 and argv[1] as it was
 * called (`/bin/contour`) and argv[0] as its resolved path; under `node bin/…`, argv0 is node and
 * argv[1] the script's path as called, links kept.
 */
export function peerCalled(argv0: string, argv: readonly string[]): PeerName | undefined {
  const named = (path: string | undefined): PeerName | undefined => (path === undefined ? undefined : PEER_NAMES.find((name) => name === basename(path)));
  return named(argv0) ?? named(argv[1]);
}

/** Runs the command line as the peer it was called as, or as our own CLI (`ownMain`). */
export async function dispatch(argv0: string, argv: readonly string[], ownMain: (args: readonly string[]) => Promise<number>): Promise<number> {
  const name = peerCalled(argv0, argv);
  if (name === undefined) return ownMain(argv.slice(2));
  const [{ runPeer }, peer] = await Promise.all([
    import('./peer.js'),
    name === 'contour' ? import('./contour.js').then((module) => module.contour) : import('./envoy-gateway.js').then((module) => module.envoyGateway),
  ]);
  return runPeer(peer, argv.slice(2));
}
