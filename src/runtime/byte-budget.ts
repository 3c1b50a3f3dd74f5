/**
 * A budget of bytes shared by concurrent requests (a counting semaphore that never waits): each request
 * takes a {@link BudgetLease}, grows it before it holds more memory, and gives it all back when it ends.
 * A request the budget cannot take is refused at once (HTTP 429 with Retry-After), so what every
 * request in flight holds together stays within the capacity whatever clients send.
 */

/** A request's share of a {@link ByteBudget}. */
export interface BudgetLease {
  /** Bytes held. */
  readonly bytes: number;
  /**
   * Takes `bytes` more when the budget has them; false (nothing taken) otherwise. A `bytes` that is not a
   * non-negative integer is a RangeError: NaN would pass every comparison and leave the budget refusing
   * nothing from then on.
   */
  tryTake(bytes: number): boolean;
  /** Gives back everything held; later calls do nothing. */
  release(): void;
}

/** Bytes shared by requests in flight. */
export class ByteBudget {
  #inUse = 0;
  #peak = 0;

  /** @param capacity bytes all leases may hold together */
  constructor(readonly capacity: number) {
    if (!Number.isSafeInteger(capacity) || capacity <= 0) throw new RangeError(`byte budget: capacity must be a positive integer, got ${capacity}`);
  }

  /** Bytes held by all leases now. */
  get inUse(): number {
    return this.#inUse;
  }

  /** The most bytes held at once so far. */
  get peak(): number {
    return this.#peak;
  }

  /** A new, empty lease. */
  lease(): BudgetLease {
    let held = 0;
    let released = false;
    const take = (bytes: number): boolean => {
      if (!Number.isSafeInteger(bytes) || bytes < 0) throw new RangeError(`byte budget: bytes to take must be a non-negative integer, got ${bytes}`);
      if (released || this.#inUse + bytes > this.capacity) return false;
      this.#inUse += bytes;
      held += bytes;
      this.#peak = Math.max(this.#peak, this.#inUse);
      return true;
    };
    return {
      get bytes() {
        return held;
      },
      tryTake: take,
      release: () => {
        if (released) return;
        released = true;
        this.#inUse -= held;
        held = 0;
      },
    };
  }
}
