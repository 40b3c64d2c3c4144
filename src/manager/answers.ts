// What the manager answers, built once and written to each response with the fewest calls: a
// release of ten thousand waiters serializes its body and headers once, not ten thousand times.
import type { ServerResponse } from 'node:http';
import { UNKNOWN_RESULT } from '../handoff/drain-result.js';
import { formatDuration } from '../shared/duration.js';
import type { NoDrain } from './drain-watchdog.js';
import type { ReadyContent } from './ready-watch.js';

export interface Answer {
  readonly status: number;
  /** Flat `[name, value, name, value…]`, the form Node writes without walking an object. */
  readonly headers: readonly string[];
  readonly body: string;
}

const TEXT = 'text/plain; charset=utf-8';
const JSON_TYPE = 'application/json';

function answer(status: number, body: string, type = TEXT): Answer {
  return { status, body, headers: ['Content-Type', type, 'Content-Length', String(Buffer.byteLength(body)), 'Cache-Control', 'no-store'] };
}

export function write(response: ServerResponse, { status, headers, body }: Answer): void {
  if (response.destroyed) return;
  response.writeHead(status, headers as string[]);
  response.end(response.req.method === 'HEAD' ? undefined : body);
}

export function reply(response: ServerResponse, status: number, body: string, type = TEXT): void {
  write(response, answer(status, body, type));
}

/** 200 with the drain report (or the body the peer's hook expects). */
export function readyAnswer(content: ReadyContent, okBody: string | undefined): Answer {
  if (okBody !== undefined) return answer(200, okBody);
  return answer(200, `${JSON.stringify(content === 'unreadable' ? { result: UNKNOWN_RESULT } : content)}\n`, JSON_TYPE);
}

/** The report's fields for the release log line. */
export function describe(content: ReadyContent): Record<string, unknown> {
  if (content === 'unreadable') return { result: UNKNOWN_RESULT, note: 'the ready file holds no drain report' };
  return { result: content.result, connections: content.connections, drainElapsedMs: content.elapsedMs, drainExitCode: content.exitCode };
}

export const STOPPING_ANSWER = answer(500, 'manager stopping before the ready file appeared: released undrained\n');

/** A 5xx makes kubelet record a FailedPreStopHook event: the drain did not finish. */
export function timeoutAnswer(readyTimeoutMs: number): Answer {
  return answer(500, `ready file did not appear within ${formatDuration(readyTimeoutMs)}\n`);
}

/** The log line and the answer for a drain that never started, or started and died. */
export function noDrainAnswer(noDrain: NoDrain): { message: string; answer: Answer } {
  if (noDrain.kind === 'never-started') {
    return {
      message: "no drain is running and no ready file appeared: releasing envoy undrained (did the sidecar's preStop hook run?)",
      answer: answer(500, 'no drain started: released undrained\n'),
    };
  }
  return {
    message: 'a drain started, but its process ended without writing the ready file: releasing envoy undrained (was the hook killed?)',
    answer: answer(500, `the drain process (pid ${noDrain.pid}) ended without finishing (${noDrain.why}): released undrained\n`),
  };
}
