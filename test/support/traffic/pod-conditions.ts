// Conditions on a pod (an Envoy stand-in) that tests wait for before acting on it. Waits poll with
// generous deadlines: a slow machine makes a test slower, never wrong.
import { setTimeout as sleep } from 'node:timers/promises';
import type { EnvoyStandIn } from '../envoy/stand-in.js';
import type { Traffic } from './traffic.js';

/** How long a pod must stay idle before it counts as idle for good: a few turns of the event loop. */
const QUIET_MS = 20;

/** Polls `condition` until it holds; throws, naming `what`, after `timeoutMs`. */
export async function waitFor(what: string, condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(2);
  }
}

/** A stat's live value; NaN (never equal to anything) when the stand-in has no such stat. */
export function stat(envoy: EnvoyStandIn, name: string): number {
  return envoy.stat(name) ?? Number.NaN;
}

export function activeConnections(envoy: EnvoyStandIn, listener = 'ingress'): number {
  return stat(envoy, `listener.${listener}.downstream_cx_active`);
}

/**
 * Waits until the terminating pod is idle for good: the LB sends it nothing new, the server has
 * accepted every connection the clients opened (none is left in the accept queue, where kill()
 * would reset it) and all are closed. Assumes `traffic` is the listener's only client.
 */
export async function untilDeprogrammedAndIdle(envoy: EnvoyStandIn, traffic: Traffic, listener = 'ingress'): Promise<void> {
  const deprogrammedAt = traffic.deprogrammedAt ?? Number.NaN;
  let quietSince: number | undefined;
  await waitFor(`${listener} deprogrammed and idle`, () => {
    const idle =
      Date.now() >= deprogrammedAt &&
      activeConnections(envoy, listener) === 0 &&
      stat(envoy, `listener.${listener}.downstream_cx_total`) === traffic.stats.connections.terminating;
    quietSince = idle ? (quietSince ?? Date.now()) : undefined;
    return quietSince !== undefined && Date.now() - quietSince >= QUIET_MS;
  });
}

/**
 * Waits for a moment when a request surely awaits its answer: one arrived since the previous poll,
 * less time ago than the listener's response delay (minus 2 ms for the event loop's cached clock,
 * by which a timer may fire early). Act on the pod in the same tick, e.g. kill() it.
 */
export async function whileRequestUnanswered(envoy: EnvoyStandIn, responseDelayMs: number, listener = 'ingress'): Promise<void> {
  const requests = (): number => stat(envoy, `http.${listener}.downstream_rq_total`);
  let total = requests();
  let at = performance.now();
  await waitFor('a request in flight', () => {
    const now = performance.now();
    const latest = requests();
    const fresh = latest > total && now - at < responseDelayMs - 2;
    total = latest;
    at = now;
    return fresh;
  });
}
