/**
 * client-go's `default_rate_limiters.go`: how long a key waits before it is retried.
 *
 * - {@link ItemExponentialFailureRateLimiter}: per key, `base · 2^failures`, capped.
 * - {@link BucketRateLimiter}: one token bucket for all keys (overall retry rate).
 * - {@link MaxOfRateLimiter}: the longest wait any of its limiters asks for.
 * - {@link defaultControllerRateLimiter}: the max of the first two, as client-go and controller-runtime.
 */
import { realClock, type Clock } from './clock.ts';

/** Decides the delay of a rate-limited retry. */
export interface RateLimiter<K> {
  /** Milliseconds `key` must wait before its next attempt; records the attempt. */
  when(key: K): number;
  /** Clears the key's failure history (call it once the key was processed successfully). */
  forget(key: K): void;
  /** How many times `key` has been rate-limited since it was last forgotten. */
  numRequeues(key: K): number;
}

function requirePositive(field: string, value: number): void {
  if (!(Number.isFinite(value) && value > 0)) throw new RangeError(`${field} must be a positive number, got ${value}`);
}

/** Options of {@link ItemExponentialFailureRateLimiter}. */
export interface ItemExponentialFailureRateLimiterOptions {
  /**
   * Delay of the first retry.
   * @default 5
   */
  readonly baseDelayMs?: number;
  /**
   * Upper bound of the delay.
   * @default 1_000_000 (1000 s)
   */
  readonly maxDelayMs?: number;
}

/** Per-key exponential backoff: `baseDelayMs · 2^n` for the n-th consecutive failure, capped at `maxDelayMs`. */
export class ItemExponentialFailureRateLimiter<K> implements RateLimiter<K> {
  readonly #failures = new Map<K, number>();
  readonly #baseDelayMs: number;
  readonly #maxDelayMs: number;

  constructor(options: ItemExponentialFailureRateLimiterOptions = {}) {
    this.#baseDelayMs = options.baseDelayMs ?? 5;
    this.#maxDelayMs = options.maxDelayMs ?? 1_000_000;
    requirePositive('baseDelayMs', this.#baseDelayMs);
    requirePositive('maxDelayMs', this.#maxDelayMs);
  }

  when(key: K): number {
    const exponent = this.#failures.get(key) ?? 0;
    this.#failures.set(key, exponent + 1);
    // 2^exponent overflows to Infinity for large exponents; min() then yields the cap, as in client-go.
    return Math.min(this.#baseDelayMs * 2 ** exponent, this.#maxDelayMs);
  }

  forget(key: K): void {
    this.#failures.delete(key);
  }

  numRequeues(key: K): number {
    return this.#failures.get(key) ?? 0;
  }
}

/** Options of {@link BucketRateLimiter}. */
export interface BucketRateLimiterOptions {
  /**
   * Tokens added per second.
   * @default 10
   */
  readonly qps?: number;
  /**
   * Bucket size: how many retries may go out back to back.
   * @default 100
   */
  readonly burst?: number;
  /**
   * Time source.
   * @default realClock
   */
  readonly clock?: Clock;
}

/**
 * A token bucket over all keys (client-go wraps `golang.org/x/time/rate`): each `when` reserves one
 * token and returns how long until that token exists. Keys have no history, so `forget` does nothing.
 */
export class BucketRateLimiter<K> implements RateLimiter<K> {
  readonly #qps: number;
  readonly #burst: number;
  readonly #clock: Clock;
  #tokens: number;
  #last: number;

  constructor(options: BucketRateLimiterOptions = {}) {
    this.#qps = options.qps ?? 10;
    this.#burst = options.burst ?? 100;
    this.#clock = options.clock ?? realClock;
    requirePositive('qps', this.#qps);
    if (!(Number.isInteger(this.#burst) && this.#burst >= 1)) throw new RangeError(`burst must be an integer ≥ 1, got ${this.#burst}`);
    this.#tokens = this.#burst;
    this.#last = this.#clock.now();
  }

  when(_key: K): number {
    const now = this.#clock.now();
    const elapsedMs = Math.max(0, now - this.#last);
    this.#last = now;
    // Tokens may go negative: a reservation is a debt paid back at qps (x/time/rate `reserveN`).
    this.#tokens = Math.min(this.#burst, this.#tokens + (elapsedMs * this.#qps) / 1000) - 1;
    return this.#tokens >= 0 ? 0 : (-this.#tokens / this.#qps) * 1000;
  }

  /**
   * Takes a token if one is there now (x/time/rate `Allow`): true, or false without reserving anything,
   * for callers that drop what exceeds the budget instead of waiting.
   */
  allow(): boolean {
    const now = this.#clock.now();
    this.#tokens = Math.min(this.#burst, this.#tokens + (Math.max(0, now - this.#last) * this.#qps) / 1000);
    this.#last = now;
    if (this.#tokens < 1) return false;
    this.#tokens -= 1;
    return true;
  }

  forget(_key: K): void {}

  numRequeues(_key: K): number {
    return 0;
  }
}

/** Combines limiters: waits as long as the strictest one asks. */
export class MaxOfRateLimiter<K> implements RateLimiter<K> {
  readonly #limiters: readonly RateLimiter<K>[];

  constructor(...limiters: RateLimiter<K>[]) {
    if (limiters.length === 0) throw new RangeError('MaxOfRateLimiter needs at least one limiter');
    this.#limiters = limiters;
  }

  when(key: K): number {
    // Every limiter must record the attempt, so none is skipped even when an earlier one is larger.
    let longest = 0;
    for (const limiter of this.#limiters) longest = Math.max(longest, limiter.when(key));
    return longest;
  }

  forget(key: K): void {
    for (const limiter of this.#limiters) limiter.forget(key);
  }

  numRequeues(key: K): number {
    let most = 0;
    for (const limiter of this.#limiters) most = Math.max(most, limiter.numRequeues(key));
    return most;
  }
}

/**
 * client-go's `DefaultControllerRateLimiter`: per-key 5 ms → 1000 s exponential backoff, and at most
 * 10 retries per second overall with bursts of 100.
 */
export function defaultControllerRateLimiter<K = string>(clock: Clock = realClock): RateLimiter<K> {
  return new MaxOfRateLimiter<K>(
    new ItemExponentialFailureRateLimiter<K>({ baseDelayMs: 5, maxDelayMs: 1_000_000 }),
    new BucketRateLimiter<K>({ qps: 10, burst: 100, clock }),
  );
}
