// One root logger per process; components take a child. JSON lines by default (what log
// pipelines parse), plain text for people. Writes are synchronous: a preStop hook process can be
// killed right after its last line, and that line is the one an operator needs.
import { openSync, writeSync } from 'node:fs';

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
export const LOG_FORMATS = ['json', 'text'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

export type LogFields = Readonly<Record<string, unknown>>;

/** A line at one level: fields first (pino's convention, which log pipelines already parse), then the message. */
interface LogMethod {
  (fields: LogFields, msg: string): void;
  (msg: string): void;
}

export interface Logger {
  readonly debug: LogMethod;
  readonly info: LogMethod;
  readonly warn: LogMethod;
  readonly error: LogMethod;
  /** A logger whose every line also carries `bindings`. */
  child(bindings: LogFields): Logger;
}

export interface LogOptions {
  readonly level: LogLevel;
  readonly format: LogFormat;
  /** A second file to copy every line to, e.g. PID 1's stdout. Skipped when it cannot be opened. */
  readonly mirrorPath?: string | undefined;
}

/**
 * A few dozen lines instead of a logging library: loading one cost about 2 MiB of the idle
 * manager's memory and milliseconds of every hook's start.
 */
export function createLogger(options: LogOptions): Logger {
  const fds = [1];
  const mirrorFd = options.mirrorPath === undefined ? undefined : tryOpenForAppend(options.mirrorPath);
  if (mirrorFd !== undefined) fds.push(mirrorFd);
  const minimum = LOG_LEVELS.indexOf(options.level);
  const text = options.format === 'text';
  const write = (line: string): void => {
    const bytes = Buffer.from(text ? toText(line) : line);
    for (const fd of fds) writeFully(fd, bytes);
  };
  const make = (bindings: string): Logger => {
    const at = (level: LogLevel): LogMethod => {
      if (LOG_LEVELS.indexOf(level) < minimum) return () => undefined;
      return (fieldsOrMsg: LogFields | string, msg?: string) => {
        const fields = typeof fieldsOrMsg === 'string' ? '' : serialize(fieldsOrMsg);
        const message = typeof fieldsOrMsg === 'string' ? fieldsOrMsg : (msg ?? '');
        write(`{"level":"${level}","time":"${new Date().toISOString()}"${bindings}${fields},"msg":${JSON.stringify(message)}}\n`);
      };
    };
    return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error'), child: (more) => make(bindings + serialize(more)) };
  };
  return make('');
}

/** `,"key":value…` for the fields whose value JSON can hold (undefined ones are left out). */
function serialize(fields: LogFields): string {
  let out = '';
  for (const [key, value] of Object.entries(fields)) {
    let json: string | undefined;
    try {
      json = JSON.stringify(value);
    } catch {
      json = JSON.stringify(String(value)); // a cycle or a BigInt: its text, never a lost line
    }
    if (json !== undefined) out += `,${JSON.stringify(key)}:${json}`;
  }
  return out;
}

/** Only for Atomics.wait's pause; made at the first full pipe (a startup snapshot cannot hold one). */
let pause: Int32Array | undefined;

/**
 * Synchronous, so the last line of a hook killed right after it is not lost. A full pipe
 * (EAGAIN) is waited out for up to 10 s; a closed one (EPIPE) drops the line.
 */
function writeFully(fd: number, bytes: Buffer): void {
  let offset = 0;
  for (let waited = 0; offset < bytes.length && waited < 10_000; ) {
    try {
      offset += writeSync(fd, bytes, offset);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') return;
      pause ??= new Int32Array(new SharedArrayBuffer(4));
      Atomics.wait(pause, 0, 0, 1);
      waited += 1;
    }
  }
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
function toText(jsonLine: string): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(jsonLine) as Record<string, unknown>;
  } catch {
    return jsonLine;
  }
  const level = String(entry.level ?? '')
    .toUpperCase()
    .padEnd(5);
  const component = typeof entry.component === 'string' ? `${entry.component}: ` : '';
  const fields = Object.entries(entry)
    .filter(([key]) => !TEXT_SKIP.has(key))
    .map(([key, value]) => `${key}=${typeof value === 'string' && !/\s/.test(value) ? value : JSON.stringify(value)}`);
  return `${String(entry.time ?? '')} ${level} ${component}${String(entry.msg ?? '')}${fields.length > 0 ? ` ${fields.join(' ')}` : ''}\n`;
}
