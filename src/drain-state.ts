// While `shutdown` drains, a small file beside the ready file says so: `status` reports it, and
// the manager learns from it that a drain has started. Removed when the drain ends; a file whose
// process is gone (killed mid-drain) is treated as absent.
import { readFile, rm } from 'node:fs/promises';
import { writeFileAtomically } from './atomic-file.js';

export interface DrainInProgress {
  readonly pid: number;
  readonly startedAt: string;
  /** `hook`: run as a preStop hook; `manual`: by hand (kubectl exec). */
  readonly startedBy: 'hook' | 'manual';
  /** Before the drain proper, a hook may wait for proof that the pod is terminating. */
  readonly phase: 'awaiting-envoy-prestop' | 'draining';
  readonly minDrainMs: number;
  readonly drainTimeoutMs: number;
  readonly quietPeriodMs: number;
}

/** `/tmp/shutdown-ready` → `/tmp/shutdown-ready.draining`: same volume, found from the same option. */
export function drainStatePath(readyFile: string): string {
  return `${readyFile}.draining`;
}

export async function writeDrainState(readyFile: string, state: DrainInProgress): Promise<void> {
  await writeFileAtomically(drainStatePath(readyFile), `${JSON.stringify(state)}\n`);
}

export async function removeDrainState(readyFile: string): Promise<void> {
  await rm(drainStatePath(readyFile), { force: true });
}

export async function readDrainState(readyFile: string): Promise<DrainInProgress | undefined> {
  let state: Partial<DrainInProgress>;
  try {
    state = JSON.parse(await readFile(drainStatePath(readyFile), 'utf8')) as Partial<DrainInProgress>;
  } catch {
    return undefined;
  }
  if (typeof state.pid !== 'number' || typeof state.startedAt !== 'string' || !isAlive(state.pid)) return undefined;
  return state as DrainInProgress;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to another user.
    return (error as { code?: unknown }).code === 'EPERM';
  }
}
