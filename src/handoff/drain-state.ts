// While `shutdown` drains, a small file beside the ready file says so: `status` reports it, and
// the manager learns from it that a drain has started. Removed when the drain ends. The file names
// its process by pid and start time: a file whose process is gone (killed mid-drain), or whose pid
// now belongs to another process, is a drain that ended without finishing, never a running one.

import { type ProcessIdentity, processState } from '../shared/process-identity.js';
import { writeFileAtomicallySync } from './atomic-file.js';
import { fsCalls } from './fs-calls.js';
import { readSmallFile } from './small-file.js';

export interface DrainInProgress {
  readonly pid: number;
  /** The process's start time (see shared/process-identity.ts): with the pid, it names the process. */
  readonly pidStartTime?: string;
  readonly startedAt: string;
  /** `hook`: run as a preStop hook; `manual`: by hand (kubectl exec). */
  readonly startedBy: 'hook' | 'manual';
  /** Before the drain proper, a hook may wait for the envoy-prestop record (the pod is terminating). */
  readonly phase: 'awaiting-envoy-prestop' | 'draining';
  readonly minDrainMs: number;
  readonly drainTimeoutMs: number;
  readonly quietPeriodMs: number;
}

/** What the file says, checked against the processes that run now. */
export type DrainStateReading =
  | { readonly kind: 'none' }
  | { readonly kind: 'running'; readonly state: DrainInProgress }
  /** The file outlived its drain: the process was killed before it could write the ready file. */
  | { readonly kind: 'abandoned'; readonly state: DrainInProgress; readonly why: 'process gone' | 'pid reused or unverifiable' }
  | { readonly kind: 'unreadable' };

/** The file holds one short JSON line; anything larger is not ours. */
const MAX_DRAIN_STATE_BYTES = 4 * 1024;

/** `/tmp/shutdown-ready` → `/tmp/shutdown-ready.draining`: same volume, found from the same option. */
function drainStatePath(readyFile: string): string {
  return `${readyFile}.draining`;
}

/** Synchronous (a few hundred bytes): written just before the drain's first admin request. */
export function writeDrainState(readyFile: string, state: DrainInProgress): void {
  writeFileAtomicallySync(drainStatePath(readyFile), `${JSON.stringify(state)}\n`);
}

export async function removeDrainState(readyFile: string): Promise<void> {
  await fsCalls.rm(drainStatePath(readyFile), { force: true });
}

export async function readDrainState(readyFile: string): Promise<DrainStateReading> {
  const file = await readSmallFile(drainStatePath(readyFile), MAX_DRAIN_STATE_BYTES);
  if (file === 'absent') return { kind: 'none' };
  if (file === 'unusable') return { kind: 'unreadable' };
  let state: Partial<DrainInProgress>;
  try {
    state = JSON.parse(file.text) as Partial<DrainInProgress>;
  } catch {
    return { kind: 'unreadable' };
  }
  // A drain without a timeout (Contour's, see src/dropin) is written as null: JSON has no Infinity.
  if ((state.drainTimeoutMs as unknown) === null) state = { ...state, drainTimeoutMs: Number.POSITIVE_INFINITY };
  if (!isDrainState(state)) return { kind: 'unreadable' };
  const identity: ProcessIdentity = { pid: state.pid, startTime: state.pidStartTime };
  const process = processState(identity);
  if (process === 'running') return { kind: 'running', state };
  return { kind: 'abandoned', state, why: process === 'gone' ? 'process gone' : 'pid reused or unverifiable' };
}

function isDrainState(state: Partial<DrainInProgress>): state is DrainInProgress {
  return (
    typeof state === 'object' &&
    state !== null &&
    Number.isSafeInteger(state.pid) &&
    (state.pid as number) > 0 &&
    (state.pidStartTime === undefined || typeof state.pidStartTime === 'string') &&
    typeof state.startedAt === 'string' &&
    typeof state.minDrainMs === 'number' &&
    typeof state.drainTimeoutMs === 'number' &&
    typeof state.quietPeriodMs === 'number'
  );
}
