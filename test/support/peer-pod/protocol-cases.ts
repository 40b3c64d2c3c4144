// Each peer fixture's termination with the loads of its own listeners: which listener gets HTTP
// through the load balancer, which get HTTPS with SNI, TLS passthrough bytes, a TCP stream, gRPC or
// HTTP/3, and where the peer's stats scraper connects. Hosts and SNI names are the fixtures' own.
import type { PeerName } from '../peer-fixtures/fixtures.js';
import { grpcLoad } from './grpc-load.js';
import { h3Load } from './h3-load.js';
import { httpLoad } from './http-load.js';
import type { PeerCase } from './peer-cases.js';
import type { SideLoadFactory } from './side-load.js';
import { streamLoad } from './stream-load.js';

export interface ProtocolCase extends Omit<PeerCase, 'listenerPort'> {
  /** The clear-text HTTP listener with a catch-all virtual host for the load balancer's clients, if the fixture has one. */
  readonly listenerPort?: number;
  readonly sides: readonly SideLoadFactory[];
  readonly sidePorts: readonly number[];
  /** The load whose client is a busy keep-alive client sent straight to the pod (what Contour's drain tells it is measured). */
  readonly busyClient?: string;
}

const EG = { peer: 'envoy-gateway' as PeerName, stats: { port: 19001, path: '/stats/prometheus' }, podPorts: [19002, 19003] };
const CONTOUR = { peer: 'contour' as PeerName, listenerPort: 8080, stats: { port: 8002, path: '/stats/prometheus' }, podPorts: [8090, 8002] };

/**
 * Contour's two fixtures serve the same shape: HTTP on 8080, HTTPS (secure.example.test) and TLS
 * passthrough (pass.example.test) on 8443. `ingress` holds a passthrough stream across the
 * deletion; `gateway-api` does not, so its drain shows what ends it with only idle connections left.
 */
const contourSides = (holdPassthrough: boolean): readonly SideLoadFactory[] => [
  httpLoad({ name: 'busy keep-alive HTTP/1.1', inPod: 8080, host: 'busy.example.test' }),
  httpLoad({ name: 'HTTPS secure.example.test', inPod: 8443, host: 'secure.example.test', servername: 'secure.example.test' }),
  streamLoad({ name: 'TLS passthrough pass.example.test', inPod: 8443, servername: 'pass.example.test', hold: holdPassthrough }),
];

export const CONTOUR_CASES: readonly ProtocolCase[] = [
  { ...CONTOUR, fixture: 'ingress', sides: contourSides(true), sidePorts: [8443], busyClient: 'busy keep-alive HTTP/1.1' },
  { ...CONTOUR, fixture: 'gateway-api', sides: contourSides(false), sidePorts: [8443], busyClient: 'busy keep-alive HTTP/1.1' },
];

/** Envoy Gateway's fixtures whose listeners carry TLS (terminated, passed through, or both on one port, and HTTP/3 beside HTTPS). */
export const EG_TLS_CASES: readonly ProtocolCase[] = [
  {
    ...EG,
    fixture: 'https',
    sides: [httpLoad({ name: 'HTTPS www.example.test', inPod: 10443, host: 'www.example.test', servername: 'www.example.test' })],
    sidePorts: [10443],
  },
  {
    ...EG,
    fixture: 'tls-passthrough',
    sides: [streamLoad({ name: 'TLS passthrough pass.example.test', inPod: 10443, servername: 'pass.example.test' })],
    sidePorts: [10443],
  },
  {
    ...EG,
    fixture: 'shared-port',
    sides: [
      httpLoad({ name: 'HTTP a.example.test', inPod: 10080, host: 'a.example.test' }),
      httpLoad({ name: 'HTTP b.example.test', inPod: 10080, host: 'b.example.test' }),
      httpLoad({ name: 'HTTPS a.example.test', inPod: 10443, host: 'a.example.test', servername: 'a.example.test' }),
      streamLoad({ name: 'TLS passthrough c.example.test', inPod: 10443, servername: 'c.example.test' }),
    ],
    sidePorts: [10080, 10443],
  },
  {
    ...EG,
    fixture: 'http3',
    sides: [
      httpLoad({ name: 'HTTPS www.example.test', inPod: 10443, host: 'www.example.test', servername: 'www.example.test' }),
      h3Load({ name: 'HTTP/3 www.example.test', inPod: 10443, host: 'www.example.test' }),
    ],
    sidePorts: [10443],
  },
];

/** Envoy Gateway's fixtures of long-lived streams: a TCPRoute, a GRPCRoute. */
export const EG_STREAM_CASES: readonly ProtocolCase[] = [
  { ...EG, fixture: 'tcp', sides: [streamLoad({ name: 'TCP stream', inPod: 5432 })], sidePorts: [5432] },
  { ...EG, fixture: 'grpc', sides: [grpcLoad({ name: 'gRPC grpc.example.test', inPod: 8080, authority: 'grpc.example.test' })], sidePorts: [8080] },
];
