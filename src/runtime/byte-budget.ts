/**
 * A budget of bytes shared by concurrent requests (a counting semaphore that never waits): each request
 * takes a {@link BudgetLease}, grows it before it holds more memory, and gives it all back when it ends.
 * A request the budget cannot take is refused at once (HTTP 429 with Retry-After), so what every
 * request in flight holds together stays within the capacity whatever clients send.
 *
 * The buffers a lease allocates are freed when it is released, not when V8 next collects them: a
 * buffer that outlived a few scavenges is freed only by a full collection, so a finished request's
 * body and answer stayed resident while the next request, admitted by the bytes just given back,
 * allocated its own. Under the conversion webhook attack (docs/webhook-hardening.md) that was up to
 * 40 MiB of external memory beyond the capacity, more on a loaded machine.
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
  /**
   * A new buffer of `bytes`, paid first from what the lease holds and has not allocated, then taken from
   * the budget; undefined (nothing taken) when the budget has too little. The lease owns it: see release.
   */
  allocate(bytes: number): Buffer | undefined;
  /**
   * Gives back everything held, and frees every buffer the lease allocated at once (its memory is
   * detached: a view of it still held elsewhere reads as empty); later calls do nothing.
   */
  release(): void;
}

function checkBytes(bytes: number): void {
  if (!Number.isSafeInteger(bytes) || bytes < 0) throw new RangeError(`byte budget: bytes to take must be a non-negative integer, got ${bytes}`);
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
    let allocated = 0;
    let released = false;
    const owned: ArrayBuffer[] = [];
    const take = (bytes: number): boolean => {
      checkBytes(bytes);
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
      allocate: (bytes) => {
        checkBytes(bytes);
        if (!take(Math.max(0, bytes - (held - allocated)))) return undefined;
        allocated += bytes;
        // Never from Node's shared pool (allocUnsafe's, for small sizes): detaching that would empty other buffers.
        const buffer = Buffer.allocUnsafeSlow(bytes);
        owned.push(buffer.buffer as ArrayBuffer);
        return buffer;
      },
      release: () => {
        if (released) return;
        released = true;
        this.#inUse -= held;
        held = 0;
        for (const memory of owned.splice(0)) memory.transfer(0);
      },
    };
  }
}
