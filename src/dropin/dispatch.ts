// One executable, three names (busybox style): called as `envoy-gateway` or `contour` it answers
// those projects' shutdown-manager command lines, so their generated pods run this image
// unchanged; under any other name it is our own CLI.
import { basename } from 'node:path';
import { contour } from './contour.js';
import { envoyGateway } from './envoy-gateway.js';
import { runPeer, type Peer } from './peer.js';

const PEERS: readonly Peer[] = [envoyGateway, contour];

/**
 * The peer this process was called as. A single executable gets argv0 and argv[1] as it was
 * called (`/bin/contour`) and argv[0] as its resolved path; under `node bin/…`, argv0 is node and
 * argv[1] the script's path as called, links kept.
 */
export function peerCalled(argv0: string, argv: readonly string[]): Peer | undefined {
  const named = (path: string | undefined): Peer | undefined => (path === undefined ? undefined : PEERS.find((peer) => peer.name === basename(path)));
  return named(argv0) ?? named(argv[1]);
}

/** Runs the command line as the peer it was called as, or as our own CLI (`ownMain`). */
export function dispatch(argv0: string, argv: readonly string[], ownMain: (args: readonly string[]) => Promise<number>): Promise<number> {
  const peer = peerCalled(argv0, argv);
  return peer === undefined ? ownMain(argv.slice(2)) : runPeer(peer, argv.slice(2));
}
