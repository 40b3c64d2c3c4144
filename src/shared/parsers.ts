// Parsers for single option values, shared by the subcommands. Each throws UsageError with a
// message naming the bad value; commander turns that into one line on stderr.
import { isIP } from 'node:net';
import { parseDuration } from './duration.js';
import { UsageError } from './errors.js';

export function parsePositiveDuration(text: string): number {
  const ms = parseDuration(text);
  if (ms <= 0) throw new UsageError(`duration "${text}" must be greater than 0`);
  return ms;
}

export function parseCount(text: string): number {
  if (!/^\d+$/.test(text)) throw new UsageError(`${quote(text)} is not a whole number of 0 or more`);
  const value = Number(text);
  if (!Number.isSafeInteger(value)) throw new UsageError(`"${text}" is too large`);
  return value;
}

/** A port to listen on; 0 asks the kernel for a free one (the log says which). */
export function parseListenPort(text: string): number {
  const value = parseCount(text);
  if (value > 65_535) throw new UsageError(`port "${text}" is outside 0-65535`);
  return value;
}

/** Linux's limits on one path component and on a whole path, in bytes. */
const NAME_MAX = 255;
const PATH_MAX = 4_095;
/**
 * The longest name made from the ready file's: the temporary file that `<ready-file>.envoy-prestop`
 * is written through (`.<name>.envoy-prestop.<pid>.<8 hex>.tmp`, pid up to 7 digits).
 */
const LONGEST_SUFFIX = '.envoy-prestop.1234567.12345678.tmp'.length + 1;

export function parseReadyFile(text: string): string {
  if (!text.startsWith('/')) throw new UsageError(`ready file ${quote(text)} must be an absolute path`);
  // Found now rather than as ENAMETOOLONG halfway through a drain, after Envoy was touched.
  const names = text.split('/');
  const name = names.at(-1) ?? '';
  if (name === '' || name === '.' || name === '..') throw new UsageError(`ready file ${quote(text)} must name a file`);
  if (names.some((part) => Buffer.byteLength(part) > NAME_MAX) || Buffer.byteLength(name) + LONGEST_SUFFIX > NAME_MAX) {
    throw new UsageError(
      `ready file ${quote(text)}: its file name must be at most ${NAME_MAX - LONGEST_SUFFIX} bytes (and every directory name at most ${NAME_MAX})`,
    );
  }
  if (Buffer.byteLength(text) + LONGEST_SUFFIX > PATH_MAX) throw new UsageError(`ready file path is too long: at most ${PATH_MAX - LONGEST_SUFFIX} bytes`);
  if (text.includes('\0')) throw new UsageError('ready file path must not contain a NUL byte');
  return text;
}

/** For `shutdown`: an empty path means no ready file, like --no-ready-file. */
export function parseOptionalReadyFile(text: string): string {
  return text === '' ? '' : parseReadyFile(text);
}

/** Repeatable, and comma-separated in the environment variable. Names are matched exactly. */
export function collectListenerNames(text: string, previous: readonly string[] = []): string[] {
  const names = text.split(',').map((name) => name.trim());
  if (names.some((name) => name === '')) throw new UsageError(`listener list "${text}" has an empty name`);
  return [...previous, ...names];
}

/** Booleans in environment variables: true/false, 1/0, yes/no. An empty value is a mistake, not false. */
export function parseBoolean(text: string): boolean {
  const value = text.toLowerCase();
  if (['true', '1', 'yes'].includes(value)) return true;
  if (['false', '0', 'no'].includes(value)) return false;
  throw new UsageError(`${quote(text)} is not a boolean: expected true or false`);
}

export function parseHost(text: string): string {
  const bracketed = /^\[(.*)\]$/.exec(text);
  const host = bracketed?.[1] ?? text;
  if (isIP(host) === 0 || (bracketed !== null && isIP(host) !== 6)) {
    throw new UsageError(`host ${quote(text)} is not an IP address (omit --host to listen on every interface)`);
  }
  return host;
}

export function parseMaxWaiters(text: string): number {
  const value = parseCount(text);
  if (value < 1) throw new UsageError('--max-waiters must be at least 1');
  return value;
}

/** A setting's default (as a user would write it) through its own parser. */
export function defaultOf<T>(setting: { readonly fallback: string; readonly parse: (text: string) => T }): T {
  return setting.parse(setting.fallback);
}

/** Parses one environment variable, naming it in the error. */
export function fromEnv<T>(name: string, text: string, parse: (text: string) => T): T {
  try {
    return parse(text);
  } catch (error) {
    if (error instanceof UsageError) throw new UsageError(`${name}: ${error.message}`);
    throw error;
  }
}

/** A value in a message, with spaces and newlines visible: `" 10s\n"` shows why it was refused. */
export function quote(text: string): string {
  return JSON.stringify(text);
}
