/**
 * When the controller gives memory back to the OS. V8 sizes its heap for the peak — the pages of a
 * cache sync (LIST pages as strings, then as objects) and of the burst of reconciles that follows it —
 * and keeps them resident once they are free; the steady state needs far less. A memory-reducing GC
 * ({@link compactHeap}) once a burst of reconciles is over and the queue is idle returns them
 * (bench/convergence-bench.ts measures the RSS both at convergence and settled). Every cache sync is
 * followed by such a burst (each cached schedule is reconciled once), so it needs no GC of its own —
 * which would pause the first reconciles.
 */
import { realClock, type Clock, type TimerHandle } from '../runtime/clock.ts';
import { compactHeap } from '../runtime/heap.ts';

/** Options for {@link HeapCompactor}. */
export interface HeapCompactorOptions {
  /** Whether the controller is idle now (empty queue, no reconcile in flight). */
  readonly idle: () => boolean;
  /** How often to look for the end of a burst; a burst is over after a whole interval without reconciles. @default 5_000 */
  readonly checkIntervalMs?: number;
  /** Reconciles since the last compaction that make a burst worth compacting after. @default 100 */
  readonly minReconciles?: number;
  /** The GC to run. @default compactHeap */
  readonly compact?: () => void;
  /** Told after each compaction, with the reconciles of the burst and how long the GC blocked. @default nothing */
  readonly onCompacted?: (reconciles: number, durationMs: number) => void;
  /** @default realClock */
  readonly clock?: Clock;
}

/** Runs {@link compactHeap} after each burst of reconciles. */
export class HeapCompactor {
  readonly #idle: () => boolean;
  readonly #intervalMs: number;
  readonly #minReconciles: number;
  readonly #compact: () => void;
  readonly #onCompacted: (reconciles: number, durationMs: number) => void;
  readonly #clock: Clock;
  #reconciles = 0;
  #atLastCheck = 0;
  #timer: TimerHandle | undefined;
  #stopped = false;

  constructor(options: HeapCompactorOptions) {
    this.#idle = options.idle;
    this.#intervalMs = options.checkIntervalMs ?? 5_000;
    this.#minReconciles = options.minReconciles ?? 100;
    this.#compact = options.compact ?? compactHeap;
    this.#onCompacted = options.onCompacted ?? (() => {});
    this.#clock = options.clock ?? realClock;
    if (!(this.#intervalMs > 0)) throw new RangeError(`checkIntervalMs must be > 0, got ${this.#intervalMs}`);
    if (!(this.#minReconciles >= 1)) throw new RangeError(`minReconciles must be >= 1, got ${this.#minReconciles}`);
  }

  /** Counts one reconcile towards the next burst. */
  reconciled(): void {
    this.#reconciles++;
  }

  /** Starts watching for bursts (the workers run). */
  start(): void {
    if (this.#stopped || this.#timer) return;
    this.#schedule();
  }

  /** Stops watching for bursts. */
  stop(): void {
    this.#stopped = true;
    if (this.#timer) this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #schedule(): void {
    this.#timer = this.#clock.setTimeout(() => {
      if (this.#stopped) return;
      // Over means quiet for a whole interval, not a queue that is empty for an instant mid-burst.
      const quiet = this.#reconciles === this.#atLastCheck;
      if (quiet && this.#reconciles >= this.#minReconciles && this.#idle()) this.#run();
      this.#atLastCheck = this.#reconciles;
      this.#schedule();
    }, this.#intervalMs);
  }

  #run(): void {
    const reconciles = this.#reconciles;
    this.#reconciles = 0;
    this.#atLastCheck = 0;
    const started = performance.now();
    this.#compact();
    this.#onCompacted(reconciles, performance.now() - started);
  }
}
