// Every peer fixture (test/fixtures/peers/) loads in real Envoy 1.40: its listeners, routes,
// clusters and TLS contexts as the peer generated them, made static with the test's backend and
// certificate, pass `envoy --mode validate`. And the peers' own stats and readiness listeners are
// where the fixtures' README says, under those exact names.
import { spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testCertificate } from '../support/peer-fixtures/certificate.js';
import { type PeerFixture, peerFixtures } from '../support/peer-fixtures/fixtures.js';
import { listenerSummaries } from '../support/peer-fixtures/listeners.js';
import type { TestEnvironment } from '../support/peer-fixtures/static-bootstrap.js';
import { ensureEnvoyBinary } from '../support/real-envoy/binary.js';

const fixtures = peerFixtures();
let envoy = '';
let dir = '';
let env: TestEnvironment;

beforeAll(async () => {
  envoy = await ensureEnvoyBinary();
  dir = mkdtempSync(join(tmpdir(), 'esm-peer-validate-'));
  env = { backend: { address: '127.0.0.1', port: 3000 }, certificate: testCertificate() };
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function validate(fixture: PeerFixture): { status: number | null; output: string } {
  const config = join(dir, `${fixture.peer}-${fixture.name}.json`);
  writeFileSync(config, JSON.stringify(fixture.bootstrap(env)));
  // A file, not a pipe: the peers' access logs open /dev/stdout, which a socket pair cannot be.
  const log = join(dir, `${fixture.peer}-${fixture.name}.log`);
  const stdout = openSync(log, 'w');
  const result = spawnSync(envoy, ['--mode', 'validate', '--config-path', config, '--disable-hot-restart', '--log-level', 'warning'], {
    encoding: 'utf8',
    timeout: 20_000,
    stdio: ['ignore', stdout, 'pipe'],
  });
  closeSync(stdout);
  return { status: result.status, output: `${readFileSync(log, 'utf8')}${result.stderr}` };
}

describe("the peers' generated Envoy configuration, in real Envoy", () => {
  it('has the whole matrix of cases', () => {
    expect(fixtures.map((f) => `${f.peer}/${f.name}`).sort()).toEqual([
      'contour/bootstrap',
      'contour/gateway-api',
      'contour/ingress',
      'envoy-gateway/bootstrap',
      'envoy-gateway/dual-stack',
      'envoy-gateway/grpc',
      'envoy-gateway/http',
      'envoy-gateway/http3',
      'envoy-gateway/https',
      'envoy-gateway/shared-port',
      'envoy-gateway/stats-matcher',
      'envoy-gateway/tcp',
      'envoy-gateway/tls-passthrough',
    ]);
  });

  it.each(fixtures.map((fixture) => ({ id: `${fixture.peer}/${fixture.name}`, fixture })))('$id passes envoy --mode validate', ({ fixture }) => {
    const { status, output } = validate(fixture);
    expect(output, output).toMatch(/configuration '.*' OK/);
    expect(status, output).toBe(0);
  });

  it("Envoy Gateway's stats (19001) and readiness (19003) listeners are in every translated case, named as its README says", () => {
    for (const fixture of fixtures.filter((f) => f.peer === 'envoy-gateway' && f.name !== 'bootstrap')) {
      const listeners = listenerSummaries(fixture.bootstrap(env));
      // The stats listener comes with the bootstrap, which `egctl` renders for IPv4 whatever the
      // EnvoyProxy says; the readiness listener comes over xDS and follows its ipFamily.
      expect(listeners, fixture.name).toContainEqual({
        name: 'envoy-gateway-proxy-stats-0.0.0.0-19001',
        statName: '0.0.0.0_19001',
        chains: [{ kind: 'http', statPrefix: 'eg-stats-http' }],
      });
      const ipv6 = fixture.name === 'dual-stack';
      expect(listeners, fixture.name).toContainEqual({
        name: `envoy-gateway-proxy-ready-${ipv6 ? '::' : '0.0.0.0'}-19003`,
        statName: ipv6 ? '[__]_19003' : '0.0.0.0_19003',
        chains: [{ kind: 'http', statPrefix: 'eg-ready-http' }],
      });
    }
  });

  it("Contour's stats and health listener is stats-health on 8002, its connection manager's prefix stats", () => {
    for (const fixture of fixtures.filter((f) => f.peer === 'contour' && f.name !== 'bootstrap')) {
      expect(listenerSummaries(fixture.bootstrap(env)), fixture.name).toContainEqual({
        name: 'stats-health',
        statName: '0.0.0.0_8002',
        chains: [{ kind: 'http', statPrefix: 'stats' }],
      });
    }
  });
});
