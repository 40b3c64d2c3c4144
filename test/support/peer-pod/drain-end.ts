// How a drop-in drain ended, from the hook's own lines in the manager container's log (JSON, or
// the text lines Contour's `--log-format text` default gives): how long it took, and the bound it
// must meet with only idle connections left: its quiet period plus two of its reads plus 1 s after
// the later of its minimum drain and the last request the pod answered (both durations as the hook
// logged them).
import { QUIET_READ_SHARE } from '../../../src/drain/schedule.js';
import { parseDuration } from '../../../src/shared/duration.js';

export interface DrainEnd {
  readonly result: unknown;
  readonly elapsedMs: number;
  readonly boundMs: number;
  readonly started: Record<string, unknown> | undefined;
}

/**
 * Near the quiet period's end the hook reads a quarter of it apart: the read that sees the last
 * request may come that long after it, and the one that finds the quiet period over that long after its end.
 */
const quietReadsMs = (quietMs: number): number => (2 * quietMs) / QUIET_READ_SHARE;
/** One second for the last read, the ready file and a busy machine. */
const SLACK_MS = 1_000;

/** `busyUntil`: Date.now() when the pod answered its last request; only idle connections after it. */
export function drainEnd(log: string, busyUntil: number): DrainEnd {
  const lines = log.split('\n').map(parseLine);
  const started = lines.find((line) => line?.msg === 'shutdown started');
  const finished = lines.find((line) => line?.msg === 'shutdown finished');
  const duration = (field: string): number => parseDuration(String(started?.[field] ?? '0s'));
  return {
    result: finished?.result,
    elapsedMs: Number(finished?.elapsedMs ?? Number.NaN),
    boundMs:
      Math.max(duration('minDrainDuration'), busyUntil - Date.parse(String(started?.time ?? ''))) +
      duration('quietPeriod') +
      quietReadsMs(duration('quietPeriod')) +
      SLACK_MS,
    started,
  };
}

/** A JSON line, or a text line `<time> <LEVEL> <component>: <msg> key=value…` (values bare or JSON). */
function parseLine(line: string): Record<string, unknown> | undefined {
  try {
    const parsed: unknown = JSON.parse(line);
    return typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : undefined;
  } catch {
    const text = /^\S+ +[A-Z]+ +(?:[\w-]+: )?(.*)$/.exec(line)?.[1];
    if (text === undefined) return undefined;
    const firstField = text.search(/ \w+=/);
    const entry: Record<string, unknown> = { time: line.split(' ', 1)[0], msg: firstField === -1 ? text : text.slice(0, firstField) };
    for (const [, key, value] of text.slice(Math.max(firstField, 0)).matchAll(/ (\w+)=("(?:[^"\\]|\\.)*"|\S+)/g)) {
      entry[key as string] = (value as string).startsWith('"') ? (JSON.parse(value as string) as unknown) : value;
    }
    return entry;
  }
}
