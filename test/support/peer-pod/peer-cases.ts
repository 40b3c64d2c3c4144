// The peer pods a termination runs on: the peer's rendered pod spec (its own renderer's output),
// one fixture's Envoy configuration in it, and where that fixture's clients and scraper connect.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { IPodSpec } from 'kubernetes-models/v1';
import { parseAllDocuments } from 'yaml';
import { testCertificate } from '../peer-fixtures/certificate.js';
import { FIXTURES_DIR, type PeerName, peerFixture } from '../peer-fixtures/fixtures.js';
import type { JsonObject } from '../peer-fixtures/proto-json.js';
import type { TestEnvironment } from '../peer-fixtures/static-bootstrap.js';
import { BACKEND_PORT } from './peer-termination.js';

export interface PeerCase {
  readonly peer: PeerName;
  readonly fixture: string;
  /** The HTTP listener (a catch-all virtual host) the clients use. */
  readonly listenerPort: number;
  readonly stats: { readonly port: number; readonly path: string };
  /** The manager's port and Envoy's readiness probe port. */
  readonly podPorts: readonly number[];
}

export const PEER_CASES: readonly PeerCase[] = [
  { peer: 'envoy-gateway', fixture: 'http', listenerPort: 10080, stats: { port: 19001, path: '/stats/prometheus' }, podPorts: [19002, 19003] },
  { peer: 'envoy-gateway', fixture: 'stats-matcher', listenerPort: 10080, stats: { port: 19001, path: '/stats/prometheus' }, podPorts: [19002, 19003] },
  { peer: 'envoy-gateway', fixture: 'dual-stack', listenerPort: 10080, stats: { port: 19001, path: '/stats/prometheus' }, podPorts: [19002, 19003] },
];

/** The pod spec the peer's controller renders (test/fixtures/peers/<peer>/pod/). */
export function peerPodSpec(peer: PeerName): IPodSpec {
  const file = join(FIXTURES_DIR, peer, 'pod', peer === 'envoy-gateway' ? 'deployment.yaml' : 'daemonset.yaml');
  const workload = parseAllDocuments(readFileSync(file, 'utf8'))
    .map((doc) => doc.toJSON() as { spec?: { template?: { spec?: IPodSpec } } } | null)
    .find((doc) => doc?.spec?.template?.spec !== undefined);
  const spec = workload?.spec?.template?.spec;
  if (spec === undefined) throw new Error(`${file}: no pod template`);
  return spec;
}

export function peerBootstrap(c: Pick<PeerCase, 'peer' | 'fixture'>): JsonObject {
  const env: TestEnvironment = { backend: { address: '127.0.0.1', port: BACKEND_PORT }, certificate: testCertificate() };
  return peerFixture(c.peer, c.fixture).bootstrap(env);
}
