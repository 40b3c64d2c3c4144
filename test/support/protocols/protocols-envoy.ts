// Real Envoy serving every protocol (bootstrap.ts) to the loopback backends (backends.ts), behind
// the recording admin tap the CLI tests drain through, with the listeners' and connection
// managers' live gauges readable in one call.
import { tempDir } from '../cli.js';
import { pollFor } from '../poll.js';
import { type DrainTarget, drainTargetOf } from '../real-envoy/drain-target.js';
import { get, type RealEnvoy, startRealEnvoy } from '../real-envoy/process.js';
import { type Backends, startBackends } from './backends.js';
import { protocolsBootstrap, SNI } from './bootstrap.js';
import { makeCertificate } from './certs.js';

/** Envoy's drain time: longer than any drain here, so no test meets Envoy's own drain deadline by chance. */
const ENVOY_DRAIN_TIME_S = 30;

export interface ProtocolsEnvoy {
  readonly target: DrainTarget<RealEnvoy>;
  readonly backends: Backends;
  /** Where clients connect: `listener_0` (HTTP, TCP), `tcp`, `tls` (TCP), `quic` (UDP). */
  readonly ports: { readonly http: number; readonly tcp: number; readonly tls: number; readonly quic: number };
  /** Every live listener and connection manager gauge, by full stat name (`listener.tcp_in.downstream_cx_active`). */
  gauges(): Promise<Gauges>;
  /** Resolves with the gauges once `holds` says yes. */
  waitForGauges(what: string, holds: (gauges: Gauges) => boolean): Promise<Gauges>;
  close(): Promise<void>;
}

export type Gauges = ReadonlyMap<string, number>;

const GAUGES = '^(listener\\..*\\.downstream_cx_active|http\\..*\\.downstream_(cx|rq)_active)$';

export async function startProtocolsEnvoy(defer: (cleanup: () => unknown) => void): Promise<ProtocolsEnvoy> {
  const dir = tempDir('esm-protocols-');
  defer(dir.cleanup);
  const certificates = {
    passthrough: makeCertificate(dir.path, SNI.passthrough),
    terminated: makeCertificate(dir.path, SNI.terminated),
    quic: makeCertificate(dir.path, SNI.quic),
  };
  const backends = await startBackends(certificates.passthrough.certPath, certificates.passthrough.keyPath);
  defer(() => backends.close());
  const envoy = await startRealEnvoy({
    bootstrap: protocolsBootstrap(backends, certificates),
    args: ['--drain-strategy', 'immediate', '--drain-time-s', String(ENVOY_DRAIN_TIME_S)],
  });
  const target = await drainTargetOf(envoy);
  defer(() => target.close());
  const port = (name: string): number => {
    const bound = envoy.ports[name];
    if (bound === undefined) throw new Error(`Envoy bound no ${name} listener: ${Object.keys(envoy.ports).join(', ')}`);
    return bound;
  };
  const gauges = async (): Promise<Gauges> => {
    const answer = await get(envoy.adminAddress, `/stats?filter=${encodeURIComponent(GAUGES)}&format=json`);
    if (answer.status !== 200) throw new Error(`/stats answered ${answer.status}: ${answer.body}`);
    return new Map((JSON.parse(answer.body) as { stats: Array<{ name: string; value: number }> }).stats.map((s) => [s.name, s.value]));
  };
  const http = port('listener_0');
  return {
    target,
    backends,
    ports: { http, tcp: port('tcp'), tls: port('tls'), quic: port('quic') },
    gauges,
    waitForGauges: (what, holds) => {
      let last: Gauges | undefined;
      return pollFor(
        what,
        async () => {
          last = await gauges();
          return holds(last) ? last : undefined;
        },
        { timeoutMs: 10_000, lastSeen: () => JSON.stringify(Object.fromEntries(last ?? [])) },
      );
    },
    close: () => target.close(),
  };
}
