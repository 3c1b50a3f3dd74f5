/**
 * client-go's `rate_limiting_queue.go`: a {@link DelayingQueue} whose retries wait as long as a
 * {@link RateLimiter} says. This is the queue a controller uses: `addRateLimited` after a failed
 * reconcile, `forget` after a successful one.
 */
import type { Clock } from './clock.ts';
import { DelayingQueue } from './delaying-queue.ts';
import { defaultControllerRateLimiter, type RateLimiter } from './rate-limiters.ts';
import type { WorkQueueMetricsProvider } from './work-queue.ts';

/** The queue a controller's workers pull keys from. */
export interface RateLimitingQueue<K = string> {
  /** Queues `key` now (deduplicated; re-queued after `done` if it is being processed). */
  add(key: K): void;
  /** Queues `key` after `delayMs`; a key already waiting keeps the earlier time. */
  addAfter(key: K, delayMs: number): void;
  /**
   * Queues `key` after the rate limiter's delay for it (a retry), and not before `atLeastMs` (the
   * server's `Retry-After`): the attempt is recorded either way, so the backoff keeps growing.
   */
  addRateLimited(key: K, atLeastMs?: number): void;
  /** Clears the rate limiter's history of `key`: its next failure starts the backoff anew. */
  forget(key: K): void;
  /** Retries of `key` since it was last forgotten. */
  numRequeues(key: K): number;
  /** The next key, owned by the caller until `done`; `undefined` once shut down and empty, or once `signal` aborts the wait. */
  get(signal?: AbortSignal): Promise<K | undefined>;
  /** Ends processing of `key`. */
  done(key: K): void;
  /** Keys queued and not yet handed out. */
  len(): number;
  /** Stops intake; idle `get` calls resolve `undefined`; delayed keys are dropped. */
  shutDown(): void;
  /** Stops intake, then resolves once every key handed out has been marked `done`. */
  shutDownWithDrain(): Promise<void>;
  shuttingDown(): boolean;
}

/** Options of {@link createRateLimitingQueue}. */
export interface RateLimitingQueueOptions<K> {
  /**
   * The queue's name, the `name` label of its metrics (controller-runtime uses the controller name).
   * @default ''
   */
  readonly name?: string;
  /**
   * Time source of delays, the rate limiter's default bucket and metrics.
   * @default realClock
   */
  readonly clock?: Clock;
  /**
   * Decides retry delays.
   * @default defaultControllerRateLimiter(clock)
   */
  readonly rateLimiter?: RateLimiter<K>;
  /**
   * Where the `workqueue_*` metrics go.
   * @default no metrics
   */
  readonly metrics?: WorkQueueMetricsProvider;
}

class RateLimitedDelayingQueue<K> extends DelayingQueue<K> implements RateLimitingQueue<K> {
  readonly #rateLimiter: RateLimiter<K>;

  constructor(options: RateLimitingQueueOptions<K>) {
    super({
      ...(options.name !== undefined ? { name: options.name } : {}),
      ...(options.clock ? { clock: options.clock } : {}),
      ...(options.metrics ? { metrics: options.metrics } : {}),
    });
    this.#rateLimiter = options.rateLimiter ?? defaultControllerRateLimiter<K>(this.clock);
  }

  addRateLimited(key: K, atLeastMs = 0): void {
    this.addAfter(key, Math.max(atLeastMs, this.#rateLimiter.when(key)));
  }

  forget(key: K): void {
    this.#rateLimiter.forget(key);
  }

  numRequeues(key: K): number {
    return this.#rateLimiter.numRequeues(key);
  }
}

/** Creates the rate-limited work queue of a controller. */
export function createRateLimitingQueue<K = string>(options: RateLimitingQueueOptions<K> = {}): RateLimitingQueue<K> {
  return new RateLimitedDelayingQueue<K>(options);
}
