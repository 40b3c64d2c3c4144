// The drop-in pods of the golden table, each run in the sandbox (../support/sandbox.ts) with the
// real Envoy bound in.
import { dirname, resolve } from 'node:path';
import type { PodObservation, PodScenario } from '../support/dropin/pod.js';
import { ensureEnvoyBinary } from '../support/real-envoy/binary.js';
import { runSandboxed } from '../support/sandbox.js';

export type Scenario = Omit<PodScenario, 'envoyBinary'>;

export async function runInSandbox(scenario: Scenario): Promise<PodObservation> {
  const envoyBinary = await ensureEnvoyBinary();
  return runSandboxed<PodObservation>(resolve('test/.build/dropin-pod-main.cjs'), { ...scenario, envoyBinary }, [dirname(envoyBinary)]);
}
