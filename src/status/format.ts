// The status report as text for a person. Pure.

import type { PairingReport } from '../envoy/busy-connections.js';
import { formatDuration } from '../shared/duration.js';
import type { StatusReport } from './status.js';

export function formatStatus(report: StatusReport): string {
  const rows: Array<[string, string]> = [['envoy', envoyLine(report)]];
  if (report.connections !== null) rows.push(['connections', connectionsLine(report.connections)]);
  if (report.connections !== null && 'pairing' in report.connections && report.connections.pairing !== undefined)
    rows.push(['served by', pairingLine(report.connections.pairing)]);
  if (report.newConnections !== null)
    rows.push(['new', `${report.newConnections.count} in the last ${formatDuration(roundTo(report.newConnections.intervalMs))}`]);
  rows.push(['drain', drainLine(report.drain)]);
  rows.push(['last drain', lastDrainLine(report.lastDrain)]);
  return rows.map(([label, value]) => `${label.padEnd(12)} ${value}`).join('\n');
}

function envoyLine(report: StatusReport): string {
  if (!report.envoy.reachable) return `unreachable: ${report.envoy.error}`;
  return `${report.envoy.state}, health check ${report.envoy.healthCheck}`;
}

function connectionsLine(connections: NonNullable<StatusReport['connections']>): string {
  if (connections.total === null) return `unknown: ${connections.error}`;
  const split = Object.entries(connections.listeners ?? {}).map(([name, active]) => `${name} ${active}`);
  const detail = split.length === 0 ? '' : ` (${split.join(', ')})`;
  const busy = connections.inFlight === undefined ? '' : `; ${connections.inFlight} carrying a request or not HTTP`;
  return `${connections.total} ${connections.source === 'total' ? 'in server.total_connections' : 'active on counted listeners'}${detail}${busy}`;
}

function pairingLine(pairing: PairingReport): string {
  const listeners = Object.entries(pairing.listeners).map(
    ([name, serves]) => `${name} -> ${[...serves.connectionManagers, ...(serves.notHttp === true ? ['(not HTTP)'] : [])].join(' + ') || '(nothing)'}`,
  );
  return listeners.join(', ') || 'no listeners';
}

function drainLine(drain: StatusReport['drain']): string {
  if (!drain.inProgress) {
    const { abandoned } = drain;
    if (abandoned === undefined) return 'none in progress in this container';
    return `none in progress; the drain started at ${abandoned.startedAt} (pid ${abandoned.pid}) ended without finishing: ${abandoned.why}`;
  }
  const minimum = drain.minDrainLeftMs > 0 ? `minimum drain ends in ${formatDuration(roundTo(drain.minDrainLeftMs))}` : 'minimum drain over';
  const quiet = drain.quietPeriodMs > 0 ? `, quiet period ${formatDuration(drain.quietPeriodMs)}` : '';
  return `in progress since ${drain.startedAt} (${drain.startedBy}, pid ${drain.pid}): ${formatDuration(roundTo(drain.elapsedMs))} elapsed, ${minimum}, timeout in ${formatDuration(roundTo(drain.timeoutLeftMs))}${quiet}`;
}

function lastDrainLine(last: StatusReport['lastDrain']): string {
  if (last === null) return 'none (no ready file)';
  if (!('elapsedMs' in last)) return 'ready file present, but it holds no drain report';
  const left = last.connections === null ? 'connections unknown' : `${last.connections} connections left`;
  return `${last.result}: ${left} after ${formatDuration(roundTo(last.elapsedMs))} (exit ${last.exitCode}, ${last.finishedAt})`;
}

/** Tenths of a second are enough for a person. */
function roundTo(ms: number): number {
  return ms < 1_000 ? Math.round(ms) : Math.round(ms / 100) * 100;
}
