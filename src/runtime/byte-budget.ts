/**
 * A budget of bytes shared by concurrent requests (a counting semaphore that never waits): each request
 * takes a {@link BudgetLease}, grows it before it holds more memory, and gives it all back when it ends.
 * A request the budget cannot take is refused at once (HTTP 429 with Retry-After), so what every
 * request in flight holds together stays within the capacity whatever clients send.
 *
 * Part of the capacity can be kept for small leases ({@link SmallLeaseRoom}): large requests, however
 * many, never take it, so small ones (kube-apiserver converting one object) still get in while large
 * uploads hold the rest (issue 41).
 *
 * The buffers a lease allocates are freed when it is released (or when it frees them), not when V8
 * next collects them: a buffer that outlived a few scavenges is freed only by a full collection, so a
 * finished request's body and answer stayed resident while the next request, admitted by the bytes just
 * given back, allocated its own. Under the conversion webhook attack (docs/webhook-hardening.md) that
 * was up to 40 MiB of external memory beyond the capacity, more on a loaded machine.
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
   * Frees a buffer {@link allocate} returned (or a view of it) at once and gives its bytes back; the
   * buffer reads as empty from then on. A buffer the lease does not own is left alone.
   */
  free(buffer: Buffer): void;
  /**
   * Gives back everything held, and frees every buffer the lease allocated at once (its memory is
   * detached: a view of it still held elsewhere reads as empty); later calls do nothing.
   */
  release(): void;
}

/** Room only small leases may use. */
export interface SmallLeaseRoom {
  /** Bytes of the capacity that leases holding more than `leaseBytes` never take. */
  readonly bytes: number;
  /** The most a lease may hold (or expect to) and still be small. */
  readonly leaseBytes: number;
}

function checkBytes(bytes: number): void {
  if (!Number.isSafeInteger(bytes) || bytes < 0) throw new RangeError(`byte budget: bytes to take must be a non-negative integer, got ${bytes}`);
}

/** Bytes shared by requests in flight. */
export class ByteBudget {
  #inUse = 0;
  #largeInUse = 0;
  #peak = 0;
  readonly #small: SmallLeaseRoom;

  /**
   * @param capacity bytes all leases may hold together
   * @param small room kept for small leases @default none
   */
  constructor(
    readonly capacity: number,
    small: SmallLeaseRoom = { bytes: 0, leaseBytes: 0 },
  ) {
    if (!Number.isSafeInteger(capacity) || capacity <= 0) throw new RangeError(`byte budget: capacity must be a positive integer, got ${capacity}`);
    if (!Number.isSafeInteger(small.bytes) || small.bytes < 0 || small.bytes >= capacity || !Number.isSafeInteger(small.leaseBytes) || small.leaseBytes < 0) {
      throw new RangeError(`byte budget: the room for small leases must be non-negative integers, below the capacity (${capacity}), got ${JSON.stringify(small)}`);
    }
    this.#small = small;
  }

  /** Bytes held by all leases now. */
  get inUse(): number {
    return this.#inUse;
  }

  /** Bytes held by large leases now (at most the capacity less the room for small ones). */
  get largeInUse(): number {
    return this.#largeInUse;
  }

  /** The most bytes held at once so far. */
  get peak(): number {
    return this.#peak;
  }

  /**
   * A new, empty lease. `expectedBytes` (a request's declared body and the answer it will need) makes it
   * large from its first byte when past the small leases' size: a large upload does not start in the
   * room kept for small ones. @param expectedBytes @default 0
   */
  lease(expectedBytes = 0): BudgetLease {
    checkBytes(expectedBytes);
    let held = 0;
    let allocated = 0;
    let released = false;
    const owned: ArrayBuffer[] = [];
    const isLarge = (bytes: number): boolean => Math.max(bytes, expectedBytes) > this.#small.leaseBytes;
    /** Moves the lease's holdings from `before` to `after` bytes, keeping the large leases' sum. */
    const account = (before: number, after: number): void => {
      this.#inUse += after - before;
      this.#largeInUse += (isLarge(after) ? after : 0) - (isLarge(before) ? before : 0);
      held = after;
      this.#peak = Math.max(this.#peak, this.#inUse);
    };
    const take = (bytes: number): boolean => {
      checkBytes(bytes);
      if (released || this.#inUse + bytes > this.capacity) return false;
      const after = held + bytes;
      if (isLarge(after) && this.#largeInUse - (isLarge(held) ? held : 0) + after > this.capacity - this.#small.bytes) return false;
      account(held, after);
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
      free: (buffer) => {
        const at = owned.indexOf(buffer.buffer as ArrayBuffer);
        if (at === -1) return;
        const [memory] = owned.splice(at, 1);
        const bytes = memory!.byteLength;
        memory!.transfer(0);
        allocated -= bytes;
        account(held, held - bytes);
      },
      release: () => {
        if (released) return;
        released = true;
        account(held, 0);
        for (const memory of owned.splice(0)) memory.transfer(0);
      },
    };
  }
}
