// Waits for the ready file on behalf of every pending /shutdown/ready request at once: one
// directory watch and one slow poll (for filesystems that deliver no events), running only while
// someone waits. Releasing N waiters costs one read of the file, not N.
import { type FSWatcher, watch } from 'node:fs';
import { basename, dirname } from 'node:path';
import { type ReadyReport, readReadyReport } from '../handoff/ready-file.js';

/** What a released waiter learns: the report, or that the file exists but is not one. */
export type ReadyContent = ReadyReport | 'unreadable';

/** Checks for the file this often even when the watch stays silent (NFS, some overlay setups). */
export const READY_POLL_INTERVAL_MS = 500;

export class ReadyWatch {
  readonly #path: string;
  readonly #name: string;
  readonly #waiters = new Set<(content: ReadyContent) => void>();
  #watcher: FSWatcher | undefined;
  #poll: NodeJS.Timeout | undefined;
  #checking = false;
  #recheck = false;

  constructor(path: string) {
    this.#path = path;
    this.#name = basename(path);
  }

  /** Resolves when the file exists. Aborting forgets the waiter at once and resolves `undefined`. */
  wait(signal: AbortSignal): Promise<ReadyContent | undefined> {
    if (signal.aborted) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      const release = (content: ReadyContent): void => {
        signal.removeEventListener('abort', forget);
        resolve(content);
      };
      const forget = (): void => {
        this.#waiters.delete(release);
        this.#stopIfIdle();
        resolve(undefined);
      };
      signal.addEventListener('abort', forget, { once: true });
      this.#waiters.add(release);
      this.#start();
      // The file may already be there, or appear before the watch is set up: look once now.
      this.#check();
    });
  }

  #start(): void {
    if (this.#poll !== undefined) return;
    this.#poll = setInterval(() => this.#check(), READY_POLL_INTERVAL_MS);
    this.#poll.unref();
    try {
      // Watch the directory: the file does not exist yet, and it arrives by rename.
      this.#watcher = watch(dirname(this.#path), { persistent: false }, (_event, name) => {
        if (name === null || name === this.#name) this.#check();
      });
      this.#watcher.on('error', () => this.#closeWatcher());
    } catch {
      this.#watcher = undefined; // no events on this filesystem: the poll alone will do
    }
  }

  #stopIfIdle(): void {
    if (this.#waiters.size > 0) return;
    clearInterval(this.#poll);
    this.#poll = undefined;
    this.#closeWatcher();
  }

  #closeWatcher(): void {
    this.#watcher?.close();
    this.#watcher = undefined;
  }

  /** Reads the file once however many events arrive meanwhile; releases everyone if it is there. */
  #check(): void {
    if (this.#checking) {
      this.#recheck = true;
      return;
    }
    this.#checking = true;
    void readReadyReport(this.#path).then((content) => {
      this.#checking = false;
      if (content !== undefined) {
        this.#recheck = false;
        const waiters = [...this.#waiters];
        this.#waiters.clear();
        this.#stopIfIdle();
        for (const release of waiters) release(content);
      } else if (this.#recheck) {
        this.#recheck = false;
        this.#check();
      }
    });
  }
}
