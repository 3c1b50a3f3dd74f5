/**
 * The reflector's reconnect backoff, as client-go's reflector configures it
 * (`wait.NewExponentialBackoffManager(800ms, 30s, 2m, 2.0, 1.0)`) and kube-rs's `DefaultBackoff`:
 * exponential from 0.8 s, capped at 30 s, jittered so a fleet of controllers does not reconnect in
 * lockstep after an API server restart, and reset once the connection has been healthy for a while.
 */
import type { Clock } from './clock.ts';

/** Options for {@link WatchBackoff}. */
export interface WatchBackoffOptions {
  /** First delay. @default 800 */
  readonly initialMs?: number;
  /** Largest delay, jitter included. @default 30_000 */
  readonly maxMs?: number;
  /** Growth per consecutive failure. @default 2 */
  readonly factor?: number;
  /** Random extra delay as a fraction of the base delay (`delay * (1 + jitter * random)`). @default 1 */
  readonly jitter?: number;
  /** A failure that comes this long after the previous one starts from `initialMs` again. @default 120_000 */
  readonly resetAfterMs?: number;
  /** Random source in [0, 1). @default Math.random */
  readonly random?: () => number;
}

/** Computes successive reconnect delays. */
export class WatchBackoff {
  readonly #initialMs: number;
  readonly #maxMs: number;
  readonly #factor: number;
  readonly #jitter: number;
  readonly #resetAfterMs: number;
  readonly #random: () => number;
  readonly #clock: Clock;
  #attempt = 0;
  #lastFailureAt: number | undefined;

  constructor(clock: Clock, options: WatchBackoffOptions = {}) {
    this.#clock = clock;
    this.#initialMs = options.initialMs ?? 800;
    this.#maxMs = options.maxMs ?? 30_000;
    this.#factor = options.factor ?? 2;
    this.#jitter = options.jitter ?? 1;
    this.#resetAfterMs = options.resetAfterMs ?? 120_000;
    this.#random = options.random ?? Math.random;
    if (!(this.#initialMs > 0)) throw new RangeError(`initialMs must be > 0, got ${this.#initialMs}`);
    if (!(this.#maxMs >= this.#initialMs)) throw new RangeError(`maxMs (${this.#maxMs}) must be >= initialMs (${this.#initialMs})`);
    if (!(this.#factor >= 1)) throw new RangeError(`factor must be >= 1, got ${this.#factor}`);
    if (!(this.#jitter >= 0)) throw new RangeError(`jitter must be >= 0, got ${this.#jitter}`);
  }

  /** Records a failure and returns how long to wait before the next attempt. */
  next(): number {
    const now = this.#clock.now();
    if (this.#lastFailureAt !== undefined && now - this.#lastFailureAt >= this.#resetAfterMs) this.#attempt = 0;
    this.#lastFailureAt = now;
    const base = Math.min(this.#maxMs, this.#initialMs * this.#factor ** this.#attempt);
    this.#attempt = Math.min(this.#attempt + 1, 64);
    return Math.min(this.#maxMs, base * (1 + this.#jitter * this.#random()));
  }

  /** Starts from `initialMs` again (after a healthy period). */
  reset(): void {
    this.#attempt = 0;
    this.#lastFailureAt = undefined;
  }

  /** Consecutive failures counted so far. */
  get attempts(): number {
    return this.#attempt;
  }
}
