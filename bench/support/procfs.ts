// What Linux says about a process: resident memory from /proc/<pid>/status and CPU time from
// /proc/<pid>/stat. Only the process itself is counted, never its children.
import { readFileSync } from 'node:fs';

export interface Memory {
  /** VmRSS: every resident page, private or shared. */
  readonly rssKiB: number;
  /** RssAnon: private anonymous pages (heaps, stacks): what the process really costs. */
  readonly anonKiB: number;
  /** RssFile: file-backed pages (the executable's code), shared through the page cache. */
  readonly fileKiB: number;
}

export function readMemory(pid: number): Memory {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name: string): number => {
    const match = new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status);
    if (match === null) throw new Error(`/proc/${pid}/status has no ${name}`);
    return Number(match[1]);
  };
  return { rssKiB: field('VmRSS'), anonKiB: field('RssAnon'), fileKiB: field('RssFile') };
}

/** utime + stime of the process, in milliseconds (shared with the tests' sandboxed pods). */
export { cpuTimeMs } from '../../test/support/proc-cpu.js';

/** Private anonymous memory split by where it lives (from /proc/<pid>/smaps), in KiB. */
export interface AnonSplit {
  /** `[heap]`: glibc malloc's main arena (the brk heap). */
  readonly brkHeapKiB: number;
  /** Unnamed anonymous mappings: V8's heap pages and the malloc arenas of other threads. */
  readonly mappingsKiB: number;
}

export function readAnonSplit(pid: number): AnonSplit {
  let brkHeapKiB = 0;
  let mappingsKiB = 0;
  let name = '';
  for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    const header = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (header !== null) {
      name = header[1] ?? '';
      continue;
    }
    const anonymous = /^Anonymous:\s+(\d+) kB/.exec(line);
    if (anonymous === null) continue;
    if (name === '[heap]') brkHeapKiB += Number(anonymous[1]);
    else if (name === '') mappingsKiB += Number(anonymous[1]);
  }
  return { brkHeapKiB, mappingsKiB };
}
