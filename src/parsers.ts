// Parsers for single option values, shared by the subcommands. Each throws UsageError with a
// message naming the bad value; commander turns that into one line on stderr.
import { isIP } from 'node:net';
import { parseDuration } from './duration.js';
import { CONNECTION_SOURCES, type ConnectionSource } from './envoy/stats.js';
import { UsageError } from './errors.js';

export function parsePositiveDuration(text: string): number {
  const ms = parseDuration(text);
  if (ms <= 0) throw new UsageError(`duration "${text}" must be greater than 0`);
  return ms;
}

export function parseCount(text: string): number {
  const trimmed = text.trim();
  if (!/^\d+$/.test(trimmed)) throw new UsageError(`"${text}" is not a whole number of 0 or more`);
  const value = Number(trimmed);
  if (!Number.isSafeInteger(value)) throw new UsageError(`"${text}" is too large`);
  return value;
}

/** A port to listen on; 0 asks the kernel for a free one (the log says which). */
export function parseListenPort(text: string): number {
  const value = parseCount(text);
  if (value > 65_535) throw new UsageError(`port "${text}" is outside 0-65535`);
  return value;
}

export function parseConnectionSource(text: string): ConnectionSource {
  const value = text.trim();
  if (!(CONNECTION_SOURCES as readonly string[]).includes(value)) {
    throw new UsageError(`"${text}" is not a connection source: expected ${CONNECTION_SOURCES.join(' or ')}`);
  }
  return value as ConnectionSource;
}

export function parseReadyFile(text: string): string {
  if (!text.startsWith('/')) throw new UsageError(`ready file "${text}" must be an absolute path`);
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

/** Booleans in environment variables: true/false, 1/0, yes/no. */
export function parseBoolean(text: string): boolean {
  const value = text.trim().toLowerCase();
  if (['true', '1', 'yes'].includes(value)) return true;
  if (['false', '0', 'no', ''].includes(value)) return false;
  throw new UsageError(`"${text}" is not a boolean: expected true or false`);
}

export function parseHost(text: string): string {
  const host = text.trim().replace(/^\[(.*)\]$/, '$1');
  if (isIP(host) === 0) throw new UsageError(`host "${text}" is not an IP address (omit --host to listen on every interface)`);
  return host;
}

export function parseMaxWaiters(text: string): number {
  const value = parseCount(text);
  if (value < 1) throw new UsageError('--max-waiters must be at least 1');
  return value;
}
