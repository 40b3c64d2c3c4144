// "No drain, no hostage": Envoy's preStop hook waits on /shutdown/ready for a drain that the
// sidecar's own hook runs. If that hook never started (the binary is missing, the exec failed, the
// sidecar had just restarted) or died mid-drain, nothing would write the ready file and Envoy
// would be held until --ready-timeout. The watchdog notices and gives up early instead, saying
// which of the two happened.
import { existsSync } from 'node:fs';
import { readDrainState } from '../handoff/drain-state.js';

/** After the window, how often to look again (a drain process could still die later). */
const RECHECK_MS = 1_000;

/** Why the watchdog gave up. */
export type NoDrain =
  | { readonly kind: 'never-started' }
  /** A drain started, but its process is gone (or its pid now names another process) without a ready file. */
  | { readonly kind: 'abandoned'; readonly pid: number; readonly startedAt: string; readonly why: string };

export class DrainWatchdog {
  readonly #readyFile: string;
  readonly #windowMs: number;
  readonly #watchers = new Set<(noDrain: NoDrain) => void>();
  #timer: NodeJS.Timeout | undefined;
  /** Changes whenever the last watcher leaves: a check begun in an earlier episode must not act. */
  #episode = 0;

  /** `windowMs` 0 turns the watchdog off: waiters then wait for the file or their timeout. */
  constructor(readyFile: string, windowMs: number) {
    this.#readyFile = readyFile;
    this.#windowMs = windowMs;
  }

  /**
   * Calls `onGiveUp` when, `windowMs` after the first watcher of an episode, no drain is running
   * and no ready file exists, or at any later check where that is so. Returns the way to stop
   * watching: a waiter that leaves must call it, so that nothing of it stays behind. When the last
   * watcher leaves, the next one starts a new window.
   */
  watch(onGiveUp: (noDrain: NoDrain) => void): () => void {
    if (this.#windowMs === 0) return () => undefined;
    this.#watchers.add(onGiveUp);
    if (this.#timer === undefined) this.#schedule(this.#windowMs);
    return () => {
      this.#watchers.delete(onGiveUp);
      if (this.#watchers.size === 0) this.#disarm();
    };
  }

  #disarm(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#episode += 1;
  }

  #schedule(delayMs: number): void {
    this.#timer = setTimeout(() => void this.#check(), delayMs);
  }

  async #check(): Promise<void> {
    const episode = this.#episode;
    const state = await readDrainState(this.#readyFile);
    if (episode !== this.#episode) return; // everyone left meanwhile
    if (state.kind === 'running' || existsSync(this.#readyFile)) {
      this.#schedule(RECHECK_MS);
      return;
    }
    const noDrain: NoDrain =
      state.kind === 'abandoned' ? { kind: 'abandoned', pid: state.state.pid, startedAt: state.state.startedAt, why: state.why } : { kind: 'never-started' };
    const watchers = [...this.#watchers];
    this.#watchers.clear();
    this.#disarm();
    for (const giveUp of watchers) giveUp(noDrain);
  }
}
