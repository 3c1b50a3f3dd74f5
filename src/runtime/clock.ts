/**
 * Time as an injectable dependency: every time-dependent class takes a `Clock` in its options
 * (defaulting to {@link realClock}) so tests step a {@link FakeClock} instead of sleeping.
 */

/** An opaque timer handle. */
export interface TimerHandle {
  readonly id: number;
}

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Runs `fn` once after `ms` milliseconds. */
  setTimeout(fn: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
  /** Resolves after `ms` milliseconds, or rejects with the signal's reason when it aborts first. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

function sleepOn(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = (): void => {
      clock.clearTimeout(handle);
      reject(signal?.reason);
    };
    const handle = clock.setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

const realTimers = new Map<number, NodeJS.Timeout>();
let nextRealTimerId = 1;

/** The wall clock and Node's timers. Timers are unref'd: a pending timer never keeps the process alive. */
export const realClock: Clock = {
  now: () => Date.now(),
  setTimeout(fn, ms) {
    const id = nextRealTimerId++;
    const timer = setTimeout(() => {
      realTimers.delete(id);
      fn();
    }, ms);
    timer.unref();
    realTimers.set(id, timer);
    return { id };
  },
  clearTimeout(handle) {
    const timer = realTimers.get(handle.id);
    if (timer) clearTimeout(timer);
    realTimers.delete(handle.id);
  },
  sleep(ms, signal) {
    return sleepOn(realClock, ms, signal);
  },
};

interface PendingTimer {
  readonly id: number;
  readonly at: number;
  readonly fn: () => void;
}

/** A clock that moves only when a test calls {@link FakeClock.step} (client-go's `FakeClock`). */
export class FakeClock implements Clock {
  #now: number;
  #timers: PendingTimer[] = [];
  #nextId = 1;

  constructor(startMs = Date.UTC(2026, 0, 1)) {
    this.#now = startMs;
  }

  now(): number {
    return this.#now;
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    const timer = { id: this.#nextId++, at: this.#now + Math.max(0, ms), fn };
    this.#timers.push(timer);
    return { id: timer.id };
  }

  clearTimeout(handle: TimerHandle): void {
    this.#timers = this.#timers.filter((t) => t.id !== handle.id);
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return sleepOn(this, ms, signal);
  }

  /** Timers not yet fired. */
  get pendingTimers(): number {
    return this.#timers.length;
  }

  /** Advances time by `ms`, firing every timer that comes due, in order of due time. */
  step(ms: number): void {
    const target = this.#now + ms;
    for (;;) {
      const due = this.#timers.filter((t) => t.at <= target).sort((a, b) => a.at - b.at || a.id - b.id)[0];
      if (!due) break;
      this.#timers = this.#timers.filter((t) => t !== due);
      this.#now = Math.max(this.#now, due.at);
      due.fn();
    }
    this.#now = target;
  }
}

realClock satisfies Clock;
