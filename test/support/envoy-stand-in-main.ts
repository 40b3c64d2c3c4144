// Runs the Envoy stand-in as its own process, for tests that must signal or kill "Envoy".
// Options come as JSON in argv[2]; stdout carries one JSON event per line, starting with "ready".
import { EnvoyStandIn, type EnvoyStandInOptions } from './envoy/stand-in.js';

function emit(event: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify(event)}\n`);
}

async function main(): Promise<void> {
  const options = JSON.parse(process.argv[2] ?? '{}') as EnvoyStandInOptions;
  const standIn = await EnvoyStandIn.start(options);
  standIn.on('admin-call', (call) => emit({ event: 'admin-call', ...call }));

  const exit = (event: Record<string, unknown>): void => {
    emit(event);
    // Exit only once stdout has flushed, so the last event is never lost.
    process.stdout.write('', () => process.exit(0));
  };
  // Envoy exits at once on SIGTERM/SIGINT: no drain, connections closed abruptly.
  const onSignal = (signal: NodeJS.Signals): void => {
    emit({ event: 'sigterm', signal, time: Date.now() });
    void standIn.kill().then(() => exit({ event: 'exit', reason: signal, time: Date.now() }));
  };
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
  standIn.on('quit', () => exit({ event: 'exit', reason: 'quitquitquit', time: Date.now() }));

  const listeners = Object.fromEntries((options.listeners ?? []).map(({ name }) => [name, standIn.listenerPort(name)]));
  emit({ event: 'ready', adminAddress: standIn.adminAddress, listeners, pid: process.pid });
}

main().catch((error: unknown) => {
  process.stderr.write(`envoy stand-in failed to start: ${String(error)}\n`);
  process.exit(1);
});
