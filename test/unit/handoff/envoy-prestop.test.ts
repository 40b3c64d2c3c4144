import type { IncomingMessage } from 'node:http';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  clearEnvoyPrestop,
  ENVOY_PRESTOP_RECORD_MAX_AGE_MS,
  isFresh,
  readEnvoyPrestop,
  recordEnvoyPrestop,
  waitForEnvoyPrestop,
} from '../../../src/handoff/envoy-prestop.js';
import { hookTokenCheck, parseHookToken } from '../../../src/manager/hook-token.js';
import { UsageError } from '../../../src/shared/errors.js';
import { tempDir } from '../../support/cli.js';

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

function readyFile(): string {
  const dir = tempDir();
  cleanups.push(dir.cleanup);
  return join(dir.path, 'ready');
}

describe('isFresh', () => {
  const hook = 1_000_000;
  it.each([
    [undefined, false],
    [hook, true],
    [hook + 5_000, true], // arrived while the hook waited
    [hook - 2_000, true], // kubelet's httpGet came a little before the exec hook started
    [hook - ENVOY_PRESTOP_RECORD_MAX_AGE_MS, true],
    [hook - ENVOY_PRESTOP_RECORD_MAX_AGE_MS - 1, false], // from some earlier event
  ])('a record made at %s', (at, fresh) => {
    expect(isFresh(at, hook)).toBe(fresh);
  });
});

describe('envoy-prestop record file', () => {
  it('records, reads and clears', async () => {
    const path = readyFile();
    expect(await readEnvoyPrestop(path)).toBeUndefined();
    await recordEnvoyPrestop(path, 1_700_000_000_000);
    expect(await readEnvoyPrestop(path)).toBe(1_700_000_000_000);
    clearEnvoyPrestop(path);
    expect(await readEnvoyPrestop(path)).toBeUndefined();
  });

  it('waits for a record that arrives during the wait', async () => {
    const path = readyFile();
    const started = Date.now();
    let looks = 0;
    // The record is made once the wait has looked and found none: it arrives during the wait.
    const look = async (file: string): Promise<number | undefined> => {
      const at = await readEnvoyPrestop(file);
      looks += 1;
      if (looks === 1) await recordEnvoyPrestop(path);
      return at;
    };
    const at = await waitForEnvoyPrestop(path, started, 5_000, new AbortController().signal, look);
    expect(at).toBeGreaterThanOrEqual(started);
    expect(looks).toBe(2);
  });

  it('gives up at the end of the wait when none comes, ignoring a stale record', async () => {
    const path = readyFile();
    const started = Date.now();
    await recordEnvoyPrestop(path, started - ENVOY_PRESTOP_RECORD_MAX_AGE_MS - 10_000);
    expect(await waitForEnvoyPrestop(path, started, 200, new AbortController().signal)).toBeUndefined();
    expect(Date.now() - started).toBeGreaterThanOrEqual(200);
  });
});

describe('hook token', () => {
  const request = (headers: Record<string, string | string[]>): IncomingMessage => ({ headers }) as unknown as IncomingMessage;
  const check = hookTokenCheck('0123456789abcdef-secret');

  it.each([
    [{ 'x-envoy-shutdown-token': '0123456789abcdef-secret' }, true],
    [{ 'x-envoy-shutdown-token': '0123456789abcdef-secreT' }, false],
    [{ 'x-envoy-shutdown-token': '0123456789abcdef-secret ' }, false],
    [{ 'x-envoy-shutdown-token': '' }, false],
    [{ 'x-envoy-shutdown-token': ['0123456789abcdef-secret', 'x'] }, false],
    [{}, false],
  ])('%j: %s', (headers, ok) => {
    expect(check(request(headers))).toBe(ok);
  });

  it('refuses short tokens', () => {
    expect(() => parseHookToken('short')).toThrow(UsageError);
    expect(parseHookToken('a'.repeat(16))).toBe('a'.repeat(16));
  });
});
