// SIGINT/SIGTERM handling, installed before anything else is loaded. As PID 1 in a container a
// signal without a handler is dropped (the kernel never applies a default action to PID 1), and
// loading the CLI takes tens of milliseconds: kubelet's SIGTERM in that window would be lost.
// This module imports nothing so that the entry point can install it first.

const SIGNAL_NUMBERS = { SIGINT: 2, SIGTERM: 15 } as const;
export type TerminationSignal = keyof typeof SIGNAL_NUMBERS;

const listeners: Array<(signal: TerminationSignal) => void> = [];
let first: TerminationSignal | undefined;

/**
 * Catches SIGINT/SIGTERM from now on. A first signal that arrives before any command subscribed
 * is held and handed to the first subscriber; a second one exits at once with 128 + its number,
 * for an operator who does not want to wait.
 */
export function captureTerminationSignals(): void {
  const handle = (signal: TerminationSignal): void => {
    if (first !== undefined) process.exit(128 + SIGNAL_NUMBERS[signal]);
    first = signal;
    for (const listener of listeners) listener(signal);
  };
  process.on('SIGINT', handle);
  process.on('SIGTERM', handle);
}

/** Calls `onFirst` on the first SIGINT/SIGTERM, at once if one already arrived. */
export function onTerminationSignal(onFirst: (signal: TerminationSignal) => void): void {
  listeners.push(onFirst);
  if (first !== undefined) onFirst(first);
}

/** The exit code of a process stopped at once by a second signal. */
export function signalExitCode(signal: TerminationSignal): number {
  return 128 + SIGNAL_NUMBERS[signal];
}
