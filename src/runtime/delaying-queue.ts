/**
 * client-go's `delaying_queue.go`: a {@link WorkQueue} whose keys can be added after a delay.
 *
 * Waiting keys sit in a min-heap by due time, with one clock timer armed for the earliest. A key
 * already waiting keeps the *earlier* of its two due times (client-go: "if the entry is already
 * present, update its readyAt only if sooner"), so a short retry is never pushed back by a long one.
 */
import type { TimerHandle } from './clock.ts';
import { KeyedMinHeap } from './internal/heap.ts';
import { WorkQueue, type WorkQueueOptions } from './work-queue.ts';

/** Options of {@link DelayingQueue}: those of {@link WorkQueue}. */
export type DelayingQueueOptions = WorkQueueOptions;

/** A work queue with {@link DelayingQueue.addAfter}. */
export class DelayingQueue<K = string> extends WorkQueue<K> {
  readonly #waiting = new KeyedMinHeap<K>();
  #timer: { handle: TimerHandle; at: number } | undefined;

  constructor(options: DelayingQueueOptions = {}) {
    super(options);
  }

  /**
   * Adds `key` once `delayMs` has passed on the clock; at once when `delayMs` ≤ 0. Ignored after
   * shutdown. Counts as a retry in `workqueue_retries_total`, as in client-go.
   */
  addAfter(key: K, delayMs: number): void {
    if (this.shuttingDown()) return;
    if (!Number.isFinite(delayMs)) {
      throw new RangeError(`addAfter: delayMs must be a number of milliseconds, got ${delayMs}`);
    }
    this.retriesMetric.inc();
    if (delayMs <= 0) {
      this.add(key);
      return;
    }
    const readyAt = this.clock.now() + delayMs;
    const existing = this.#waiting.priorityOf(key);
    if (existing !== undefined && existing <= readyAt) return;
    this.#waiting.set(key, readyAt);
    this.#arm();
  }

  /** Keys waiting for their delay to pass. */
  waitingLen(): number {
    return this.#waiting.size;
  }

  /** Also drops every waiting key and its timer (client-go stops its waiting loop). */
  override shutDown(): void {
    this.#disarm();
    this.#waiting.clear();
    super.shutDown();
  }

  #arm(): void {
    const next = this.#waiting.peek();
    if (!next) return this.#disarm();
    if (this.#timer && this.#timer.at <= next.priority) return;
    this.#disarm();
    const handle = this.clock.setTimeout(() => this.#fire(), next.priority - this.clock.now());
    this.#timer = { handle, at: next.priority };
  }

  #disarm(): void {
    if (this.#timer) this.clock.clearTimeout(this.#timer.handle);
    this.#timer = undefined;
  }

  #fire(): void {
    this.#timer = undefined;
    const now = this.clock.now();
    for (let next = this.#waiting.peek(); next && next.priority <= now; next = this.#waiting.peek()) {
      this.#waiting.pop();
      this.add(next.key);
    }
    this.#arm();
  }
}
