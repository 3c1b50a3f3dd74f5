/**
 * Progress of a long copy: a log line at least every `intervalMs` with bytes, rate and, when the total
 * is known, the percentage. Takes a Clock so tests step time instead of sleeping.
 */
import { realClock, type Clock, type TimerHandle } from '../runtime/clock.ts';
import type { Logger } from '../runtime/logger.ts';

/** Options of {@link Progress}. */
export interface ProgressOptions {
  readonly logger: Logger;
  /** Label of the phase in the log line (`msg`). */
  readonly what: string;
  /** Interval between progress lines. @default 5000 */
  readonly intervalMs?: number;
  /** @default realClock */
  readonly clock?: Clock;
}

/** MB/s (10^6 bytes per second) over `ms`, rounded to 0.1. */
export function megabytesPerSecond(bytes: number, ms: number): number {
  return ms <= 0 ? 0 : Math.round((bytes / 1e6 / (ms / 1000)) * 10) / 10;
}

/** Counts bytes and logs progress on a timer until {@link Progress.stop}. */
export class Progress {
  #bytes = 0;
  #total: number | undefined;
  #timer: TimerHandle | undefined;
  readonly #started: number;
  readonly #clock: Clock;
  readonly #intervalMs: number;

  constructor(private readonly options: ProgressOptions) {
    this.#clock = options.clock ?? realClock;
    this.#intervalMs = options.intervalMs ?? 5000;
    this.#started = this.#clock.now();
    this.#schedule();
  }

  /** Adds `n` copied bytes. */
  add(n: number): void {
    this.#bytes += n;
  }

  /** Sets the expected total (when the source tells it). */
  setTotal(total: number): void {
    this.#total = total;
  }

  /** Restarts the count (a retry from the next endpoint starts from zero). */
  reset(): void {
    this.#bytes = 0;
    this.#total = undefined;
  }

  /** Bytes so far. */
  get bytes(): number {
    return this.#bytes;
  }

  /** Milliseconds since the start. */
  get elapsedMs(): number {
    return this.#clock.now() - this.#started;
  }

  /** Stops the timer. */
  stop(): void {
    if (this.#timer) this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #schedule(): void {
    this.#timer = this.#clock.setTimeout(() => {
      const elapsedMs = this.elapsedMs;
      const line: Record<string, number> = { bytes: this.#bytes, mbPerSec: megabytesPerSecond(this.#bytes, elapsedMs), elapsedSec: Math.round(elapsedMs / 100) / 10 };
      if (this.#total) line['percent'] = Math.min(100, Math.round((this.#bytes / this.#total) * 1000) / 10);
      this.options.logger.info(line, `${this.options.what}: in progress`);
      this.#schedule();
    }, this.#intervalMs);
  }
}
