// Conditions on a pod (a real Envoy) that tests wait for before acting on it. Envoy offers no push,
// so waits poll its admin API with generous deadlines: a slow machine makes a test slower, never wrong.

import { pollUntil } from '../poll.js';
import { get } from '../real-envoy/process.js';
import type { Traffic } from './traffic.js';

/** How long a pod must stay idle before it counts as idle for good: a few turns of the event loop. */
const QUIET_MS = 20;

/** Polls `condition` until it holds; throws, naming `what`, after `timeoutMs`. Looks often: pods change fast. */
export function waitFor(what: string, condition: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  return pollUntil(what, condition, { timeoutMs, everyMs: 2 });
}

/** A stat's live value from Envoy's admin API; NaN (never equal to anything) when Envoy has no such stat. */
export async function stat(adminAddress: string, name: string): Promise<number> {
  const { body } = await get(adminAddress, `/stats?filter=^${name.replace(/\./g, '\\.')}$&format=json`);
  return (JSON.parse(body) as { stats: Array<{ value?: number }> }).stats[0]?.value ?? Number.NaN;
}

export function activeConnections(adminAddress: string, listener = 'ingress'): Promise<number> {
  return stat(adminAddress, `listener.${listener}.downstream_cx_active`);
}

/**
 * Waits until the terminating pod is idle for good: the LB sends it nothing new, Envoy has
 * accepted every connection the clients opened (none is left in the accept queue, where a kill
 * would reset it) and all are closed. Assumes `traffic` is the listener's only client.
 */
export async function untilDeprogrammedAndIdle(adminAddress: string, traffic: Traffic, listener = 'ingress'): Promise<void> {
  const deprogrammedAt = traffic.deprogrammedAt ?? Number.NaN;
  let quietSince: number | undefined;
  await waitFor(`${listener} deprogrammed and idle`, async () => {
    const idle =
      Date.now() >= deprogrammedAt &&
      (await activeConnections(adminAddress, listener)) === 0 &&
      (await stat(adminAddress, `listener.${listener}.downstream_cx_total`)) === traffic.stats.connections.terminating;
    quietSince = idle ? (quietSince ?? Date.now()) : undefined;
    return quietSince !== undefined && Date.now() - quietSince >= QUIET_MS;
  });
}
