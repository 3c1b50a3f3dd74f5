/**
 * One piece of work run at once and then again after the delay it returns, never twice at the same
 * time: the start / stop / sync-now skeleton of the webhook's certificate sources (the Secret kept by
 * a `CertificateManager`, the files read by a `CertificateDirectory`), which extend it with their
 * {@link PeriodicSync.runOnce}. A `sync()` while the work runs does not start a second run: it asks for
 * one more right after, and resolves with it.
 */
import type { Clock, TimerHandle } from './clock.ts';

/** See the module doc. */
export abstract class PeriodicSync {
  readonly #clock: Clock;
  #timer: TimerHandle | undefined;
  #running: Promise<void> | undefined;
  #again = false;
  #stopped = true;

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  /** The work: must not throw; returns the milliseconds until it should run again. */
  protected abstract runOnce(): Promise<number>;

  /** Runs the work now, then as it asks. */
  start(): void {
    this.#stopped = false;
    void this.sync();
  }

  /** Stops the timer; a run in flight finishes. */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer) this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.#running;
  }

  /** Runs the work now (or once more after the run in flight); resolves when done. */
  sync(): Promise<void> {
    if (this.#running) {
      this.#again = true;
      return this.#running;
    }
    this.#running = (async () => {
      do {
        this.#again = false;
        this.#schedule(await this.runOnce());
      } while (this.#again && !this.#stopped);
    })().finally(() => (this.#running = undefined));
    return this.#running;
  }

  #schedule(ms: number): void {
    if (this.#stopped) return;
    if (this.#timer) this.#clock.clearTimeout(this.#timer);
    this.#timer = this.#clock.setTimeout(() => void this.sync(), Math.max(0, ms));
  }
}
