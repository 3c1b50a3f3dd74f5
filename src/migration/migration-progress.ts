/**
 * Counts of a running migration and the progress line it logs: objects done out of those known so far
 * (the items read plus the server's `remainingItemCount`), and the rate since the start.
 */
import type { Clock } from '../runtime/clock.ts';
import type { RewriteOutcome } from './rewrite-object.ts';

/** One object the migration could not rewrite. */
export interface ObjectFailure {
  readonly namespace: string | undefined;
  readonly name: string;
  /** HTTP status of the server's last answer; undefined when none came (network, timeout). */
  readonly code: number | undefined;
  readonly message: string;
  readonly attempts: number;
}

/** One object the server refused to store as it is: skipped, to be edited or deleted (see {@link ObjectSkip.fix}). */
export interface ObjectSkip {
  readonly namespace: string | undefined;
  readonly name: string;
  /** HTTP status of the server's answer (400, 413, 422). */
  readonly code: number;
  /** The server's message (for a 422, the fields and what is wrong with each). */
  readonly message: string;
}

/** Counts of a migration, as logged and returned. */
export interface MigrationCounts {
  /** Objects handled (every outcome, failures included). */
  readonly done: number;
  /** Objects known so far: read from LIST pages plus those the server said remain. */
  readonly known: number;
  /** Re-encoded by this run. */
  readonly rewritten: number;
  /** Already in the storage version. */
  readonly current: number;
  /** Deleted while the migration ran. */
  readonly gone: number;
  readonly failed: number;
  /** Refused by the server as they are: left as they were. */
  readonly skipped: number;
  /** LISTs started over after an expired continue token. */
  readonly relists: number;
  readonly elapsedSeconds: number;
  /** `done / elapsedSeconds`. */
  readonly objectsPerSecond: number;
}

/** Collects outcomes and says when a progress line is due. */
export class MigrationProgress {
  readonly #clock: Clock;
  readonly #intervalMs: number;
  readonly #started: number;
  #lastReport: number;
  #read = 0;
  #remaining = 0;
  #relists = 0;
  readonly #outcomes = { rewritten: 0, current: 0, gone: 0, failed: 0, skipped: 0 };
  readonly #failures: ObjectFailure[] = [];
  readonly #skips: ObjectSkip[] = [];

  /** `intervalMs`: the least time between two progress lines. */
  constructor(clock: Clock, intervalMs: number) {
    this.#clock = clock;
    this.#intervalMs = intervalMs;
    this.#started = clock.now();
    this.#lastReport = this.#started;
  }

  /** A LIST page arrived with `items` objects and `remaining` more on the server (if it said). */
  page(items: number, remaining: number | undefined): void {
    this.#read += items;
    this.#remaining = remaining ?? 0;
  }

  /** The LIST starts over from the first page: objects rewritten before count again in `done` when rewritten again. */
  relist(): void {
    this.#relists += 1;
    this.#read = 0;
    this.#remaining = 0;
  }

  /** Records what became of one object. */
  record(obj: { readonly namespace: string | undefined; readonly name: string }, outcome: RewriteOutcome): void {
    this.#outcomes[outcome.result] += 1;
    if (outcome.result === 'failed') this.#failures.push({ ...obj, code: outcome.code, message: outcome.message, attempts: outcome.attempts });
    if (outcome.result === 'skipped') this.#skips.push({ ...obj, code: outcome.code, message: outcome.message });
  }

  /** True (and the timer restarts) when a progress line is due. */
  due(): boolean {
    const now = this.#clock.now();
    if (now - this.#lastReport < this.#intervalMs) return false;
    this.#lastReport = now;
    return true;
  }

  /** The objects that failed, in the order they failed. */
  get failures(): readonly ObjectFailure[] {
    return this.#failures;
  }

  /** The objects skipped, in the order they were. */
  get skips(): readonly ObjectSkip[] {
    return this.#skips;
  }

  /** The counts now. */
  counts(): MigrationCounts {
    const { rewritten, current, gone, failed, skipped } = this.#outcomes;
    const done = rewritten + current + gone + failed + skipped;
    const elapsedSeconds = (this.#clock.now() - this.#started) / 1000;
    return {
      done,
      known: Math.max(done, this.#read + this.#remaining),
      rewritten, current, gone, failed, skipped,
      relists: this.#relists,
      elapsedSeconds,
      objectsPerSecond: elapsedSeconds > 0 ? Math.round(done / elapsedSeconds) : 0,
    };
  }
}
