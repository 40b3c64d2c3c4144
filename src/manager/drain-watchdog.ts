// "No drain, no hostage": Envoy's preStop hook waits on /shutdown/ready for a drain that the
// sidecar's own hook runs. If that hook never started (the binary is missing, the exec failed, the
// sidecar had just restarted) or died mid-drain, nothing would write the ready file and Envoy
// would be held until --ready-timeout. The watchdog notices and gives up early instead.
import { existsSync } from 'node:fs';
import { readDrainState } from '../drain-state.js';

/** After the window, how often to look again (a drain process could still die later). */
const RECHECK_MS = 1_000;

export class DrainWatchdog {
  readonly #readyFile: string;
  readonly #windowMs: number;
  #timer: NodeJS.Timeout | undefined;
  #gaveUp: Promise<void> | undefined;
  #giveUp: (() => void) | undefined;

  /** `windowMs` 0 turns the watchdog off: waiters then wait for the file or their timeout. */
  constructor(readyFile: string, windowMs: number) {
    this.#readyFile = readyFile;
    this.#windowMs = windowMs;
  }

  /**
   * Resolves when, `windowMs` after the first caller, no drain is running and no ready file
   * exists, and at every later check where that is so. Shared by every waiter of one episode.
   */
  watch(): Promise<void> {
    if (this.#windowMs === 0) return new Promise<void>(() => undefined);
    if (this.#gaveUp === undefined) {
      this.#gaveUp = new Promise<void>((resolve) => (this.#giveUp = resolve));
      this.#schedule(this.#windowMs);
    }
    return this.#gaveUp;
  }

  /** No one waits any more: the next waiter starts a new window. */
  disarm(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#gaveUp = undefined;
    this.#giveUp = undefined;
  }

  #schedule(delayMs: number): void {
    this.#timer = setTimeout(() => void this.#check(), delayMs);
  }

  async #check(): Promise<void> {
    const running = (await readDrainState(this.#readyFile)) !== undefined || existsSync(this.#readyFile);
    if (this.#giveUp === undefined) return; // disarmed meanwhile
    if (running) {
      this.#schedule(RECHECK_MS);
      return;
    }
    const giveUp = this.#giveUp;
    this.disarm();
    giveUp();
  }
}
