// A pid alone does not name a process: pids are reused, and a pid written to a shared emptyDir by
// an earlier container may now belong to anything. A pid together with the process's start time
// (from /proc/<pid>/stat, in clock ticks since boot) does.
import { readFileSync } from 'node:fs';

export interface ProcessIdentity {
  readonly pid: number;
  /** Field 22 of /proc/<pid>/stat; undefined where /proc cannot be read. */
  readonly startTime: string | undefined;
}

export function ownIdentity(): ProcessIdentity {
  return { pid: process.pid, startTime: startTimeOf(process.pid) };
}

/**
 * `running`: that very process still runs. `gone`: nothing runs under the pid. `other`: the pid now
 * belongs to another process, or the identity cannot be checked (no start time recorded, or no
 * /proc to compare with): a pid we cannot verify proves nothing.
 */
export function processState(identity: ProcessIdentity): 'running' | 'gone' | 'other' {
  const startTime = startTimeOf(identity.pid);
  if (startTime === undefined) return isAlive(identity.pid) ? 'other' : 'gone';
  return identity.startTime === startTime ? 'running' : 'other';
}

/** Parsed after the last `)`: the command name in parentheses may itself hold spaces and parentheses. */
export function parseStartTime(stat: string): string | undefined {
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // Fields after the name start at field 3 (state): starttime, field 22, is at index 19.
  const startTime = fields[19];
  return startTime !== undefined && /^\d+$/.test(startTime) ? startTime : undefined;
}

function startTimeOf(pid: number): string | undefined {
  try {
    return parseStartTime(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return undefined;
  }
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
