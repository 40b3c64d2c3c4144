// The drain's bookkeeping driven reading by reading: no clock, no socket, no Envoy.
import { describe, expect, it } from 'vitest';
import { type DrainState, decide, INITIAL_STATE, observe, type ProgressOptions, type Reading } from '../../../src/drain/progress.js';
import type { ConnectionReading } from '../../../src/envoy/envoy-control.js';

const OPTIONS: ProgressOptions = {
  minDrainMs: 1_000,
  drainTimeoutMs: 5_000,
  exitAtConnections: 0,
  checkIntervalMs: 500,
  quietPeriodMs: 0,
  connections: 'listeners',
  ignoreIdleConnections: false,
};

const counts = (connections: number, extra: Partial<ConnectionReading> = {}): ConnectionReading => ({
  connections,
  listeners: new Map(),
  read: { path: '/stats?usedonly&filter=x', priceMs: 0.2 },
  ...extra,
});

/** Said once, at the first reading, and again whenever the read changes. */
const READ_LINE = "reading envoy's stats with this request: what it costs envoy's main thread, at most";

/** Feeds each reading and decides at its time; returns the decisions and every message said. */
function drive(options: ProgressOptions, readings: readonly Reading[]): { decisions: string[]; said: string[]; state: DrainState } {
  let state = INITIAL_STATE;
  const decisions: string[] = [];
  const said: string[] = [];
  for (const reading of readings) {
    state = observe(options, state, reading);
    said.push(...state.events.map((event) => event.msg));
    const decided = decide(options, state, reading.elapsedMs);
    state = decided.state;
    said.push(...state.events.map((event) => event.msg));
    decisions.push(decided.decision.kind === 'done' ? decided.decision.reason : 'continue');
    if (decided.decision.kind === 'done') break;
  }
  return { decisions, said, state };
}

describe('observe and decide', () => {
  it('finishes at the first reading at or under the threshold once the minimum drain is over', () => {
    const run = drive(OPTIONS, [
      { elapsedMs: 0, counts: counts(3) },
      { elapsedMs: 500, counts: counts(0) },
      { elapsedMs: 1_000, counts: counts(0) },
    ]);
    expect(run.decisions).toEqual(['continue', 'continue', 'drained']);
    expect(run.said).toEqual([READ_LINE, 'draining', 'draining', 'minimum drain period reached', 'drain completed']);
    expect(run.state.lastCount).toBe(0);
  });

  it('treats a failed read as unknown, never zero: only the timeout ends the drain', () => {
    const run = drive(OPTIONS, [
      { elapsedMs: 1_000, counts: counts(1) },
      { elapsedMs: 4_000, failed: 'HTTP 503', refused: false },
      { elapsedMs: 5_000, failed: 'HTTP 503', refused: false },
    ]);
    expect(run.decisions).toEqual(['continue', 'continue', 'timeout']);
    expect(run.state.lastCount).toBeNull();
    expect(run.said).toContain('connection count unknown: still waiting (unknown is not zero)');
  });

  it('takes Envoy for gone after three refused reads in a row, and only then', () => {
    const refused = (elapsedMs: number): Reading => ({ elapsedMs, failed: 'ECONNREFUSED', refused: true });
    expect(drive(OPTIONS, [refused(0), refused(250), { elapsedMs: 500, counts: counts(2) }, refused(750), refused(1_000)]).decisions).toEqual([
      'continue',
      'continue',
      'continue',
      'continue',
      'continue',
    ]);
    const run = drive(OPTIONS, [refused(0), refused(250), refused(500)]);
    expect(run.decisions).toEqual(['continue', 'continue', 'envoy-unreachable']);
    expect(run.said.at(-1)).toBe('envoy is gone: its admin API refuses or drops every connection, so its connections are closed too');
  });

  it('restarts the quiet period when new connections are accepted', () => {
    const quiet = { ...OPTIONS, quietPeriodMs: 1_000 };
    const run = drive(quiet, [
      { elapsedMs: 0, counts: counts(0, { accepted: 10 }) },
      { elapsedMs: 900, counts: counts(0, { accepted: 12 }) },
      { elapsedMs: 1_500, counts: counts(0, { accepted: 12 }) },
      { elapsedMs: 1_900, counts: counts(0, { accepted: 12 }) },
    ]);
    expect(run.decisions).toEqual(['continue', 'continue', 'continue', 'drained']);
    expect(run.state.lastNewConnectionMs).toBe(900);
    expect(run.said).toContain('new connections arrived: quiet period restarted');
  });

  it('with total, waits for a stats flush after the drain began before deciding', () => {
    const total = { ...OPTIONS, connections: 'total' as const, minDrainMs: 0 };
    const run = drive(total, [
      { elapsedMs: 0, counts: counts(0, { uptimeS: 100 }) },
      { elapsedMs: 1_000, counts: counts(0, { uptimeS: 100 }) },
      { elapsedMs: 5_000, counts: counts(0, { uptimeS: 105 }) },
    ]);
    expect(run.decisions).toEqual(['continue', 'continue', 'drained']);
    expect(run.said.filter((msg) => msg.startsWith('waiting for a stats flush'))).toHaveLength(1);
  });
});
