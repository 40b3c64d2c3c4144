// One root logger per process; components take a child. JSON lines by default (what log
// pipelines parse), plain text for people. Writes are synchronous: a preStop hook process can be
// killed right after its last line, and that line is the one an operator needs.
import { openSync } from 'node:fs';
import pino, { type Logger } from 'pino';

export type { Logger } from 'pino';
export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
export const LOG_FORMATS = ['json', 'text'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

export interface LogOptions {
  readonly level: LogLevel;
  readonly format: LogFormat;
  /** A second file to copy every line to, e.g. PID 1's stdout. Skipped when it cannot be opened. */
  readonly mirrorPath?: string | undefined;
}

interface Sink {
  write(chunk: string): void;
}

export function createLogger(options: LogOptions): Logger {
  const outputs = [pino.destination({ fd: 1, sync: true })];
  const mirrorFd = options.mirrorPath === undefined ? undefined : tryOpenForAppend(options.mirrorPath);
  if (mirrorFd !== undefined) outputs.push(pino.destination({ fd: mirrorFd, sync: true }));
  const format = options.format === 'text' ? toText : (line: string) => line;
  const sink: Sink = {
    write(chunk) {
      const line = format(chunk);
      for (const output of outputs) output.write(line);
    },
  };
  return pino(
    {
      level: options.level,
      base: null,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    sink,
  );
}

function tryOpenForAppend(path: string): number | undefined {
  try {
    return openSync(path, 'a');
  } catch {
    return undefined;
  }
}

const TEXT_SKIP = new Set(['time', 'level', 'msg', 'component']);

/** `2026-01-02T03:04:05.678Z INFO  shutdown: draining connections=3 elapsedMs=1000` */
export function toText(jsonLine: string): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(jsonLine) as Record<string, unknown>;
  } catch {
    return jsonLine;
  }
  const level = String(entry['level'] ?? '').toUpperCase().padEnd(5);
  const component = typeof entry['component'] === 'string' ? `${entry['component']}: ` : '';
  const fields = Object.entries(entry)
    .filter(([key]) => !TEXT_SKIP.has(key))
    .map(([key, value]) => `${key}=${typeof value === 'string' && !/\s/.test(value) ? value : JSON.stringify(value)}`);
  return `${String(entry['time'] ?? '')} ${level} ${component}${String(entry['msg'] ?? '')}${fields.length > 0 ? ` ${fields.join(' ')}` : ''}\n`;
}
