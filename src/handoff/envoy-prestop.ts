// The envoy-prestop record: what tells `shutdown` that kubelet is terminating the pod. kubelet runs Envoy's httpGet preStop hook
// (/shutdown/ready) and the sidecar's exec hook at the same moment, but a liveness restart of the
// sidecar runs only the latter. While an authenticated /shutdown/ready waits, the manager keeps a
// record of it in a file beside the ready file; `shutdown --require-envoy-prestop` drains only
// when such a record exists and is fresh. See docs/design.md for why this cannot be fooled in a
// harmful way.
import { rmSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { writeFileAtomically } from './atomic-file.js';
import { readSmallFile } from './small-file.js';

/** A record older than this, when the hook starts, is from some other event. */
export const ENVOY_PRESTOP_RECORD_MAX_AGE_MS = 30_000;
/** The record is one short JSON line; nothing larger is read. */
const MAX_RECORD_BYTES = 1024;
/** How often `shutdown` looks for the record while it waits (a short, bounded wait). */
const RECORD_POLL_MS = 50;

export function envoyPrestopRecordPath(readyFile: string): string {
  return `${readyFile}.envoy-prestop`;
}

export async function recordEnvoyPrestop(readyFile: string, at: number = Date.now()): Promise<void> {
  await writeFileAtomically(envoyPrestopRecordPath(readyFile), `${JSON.stringify({ at: new Date(at).toISOString() })}\n`);
}

/** Synchronous, like the stale ready file's removal, so no request slips in before it. */
export function clearEnvoyPrestop(readyFile: string): void {
  rmSync(envoyPrestopRecordPath(readyFile), { force: true });
}

/** When Envoy's preStop last reached the manager, or undefined. */
export async function readEnvoyPrestop(readyFile: string): Promise<number | undefined> {
  const file = await readSmallFile(envoyPrestopRecordPath(readyFile), MAX_RECORD_BYTES);
  if (typeof file !== 'object') return undefined;
  try {
    const { at } = JSON.parse(file.text) as { at?: unknown };
    const time = typeof at === 'string' ? Date.parse(at) : Number.NaN;
    return Number.isNaN(time) ? undefined : time;
  } catch {
    return undefined;
  }
}

/** Pure: does a record made at `recordedAt` belong to a hook that started at `hookStartedAt`? */
export function isFresh(recordedAt: number | undefined, hookStartedAt: number): boolean {
  return recordedAt !== undefined && recordedAt >= hookStartedAt - ENVOY_PRESTOP_RECORD_MAX_AGE_MS;
}

/**
 * Waits up to `waitMs` for a fresh envoy-prestop record. Resolves with when it was recorded, or undefined when
 * none came: the pod is not terminating. `read` is how the record is looked at (the tests watch it).
 */
export async function waitForEnvoyPrestop(
  readyFile: string,
  hookStartedAt: number,
  waitMs: number,
  signal: AbortSignal,
  read: (readyFile: string) => Promise<number | undefined> = readEnvoyPrestop,
): Promise<number | undefined> {
  const deadline = hookStartedAt + waitMs;
  for (;;) {
    const at = await read(readyFile);
    if (isFresh(at, hookStartedAt)) return at;
    if (Date.now() >= deadline) return undefined;
    await sleep(Math.min(RECORD_POLL_MS, Math.max(0, deadline - Date.now())), undefined, { signal });
  }
}
