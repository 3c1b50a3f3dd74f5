/**
 * The worker loop (controller-runtime `pkg/internal/controller/controller.go`): wait until every
 * cache has synced, then N async workers take keys from the rate-limiting queue and reconcile them,
 * turning each result or error into forget / requeue / rate-limited retry, with metrics and a
 * per-reconcile logger.
 */
import { randomUUID } from 'node:crypto';
import { retryAfterMs } from '../kube/api-status-error.ts';
import { splitObjectKey } from '../kube/object.ts';
import { realClock, type Clock } from './clock.ts';
import { yieldIfHeld } from './event-loop-yield.ts';
import type { SyncSource } from './informer.ts';
import { silentLogger, type Logger } from './logger.ts';
import { noopControllerMetrics, type ControllerMetrics, type ControllerMetricsFactory, type ReconcileOutcome } from './metrics.ts';
import { createRateLimitingQueue, type RateLimitingQueue } from './rate-limiting-queue.ts';
import { isTerminalError, type Reconciler } from './reconciler.ts';
import type { WorkQueueMetricsProvider } from './work-queue.ts';

/** Options for {@link Controller}. */
export interface ControllerOptions {
  /** Controller name: metrics label `controller`, queue name, log field. */
  readonly name: string;
  readonly reconciler: Reconciler;
  /** @default createRateLimitingQueue({ name, clock, metrics: workQueueMetrics }) */
  readonly queue?: RateLimitingQueue<string>;
  /** `workqueue_*` metrics for the default queue. @default none */
  readonly workQueueMetrics?: WorkQueueMetricsProvider;
  /**
   * Concurrent reconciles. Node runs them on one thread, but a reconcile spends almost all its time
   * awaiting the API server, so a few workers overlap that latency; more would mostly raise the
   * burst of writes against the API server (client-go's default client allows 5 qps / 10 burst) and
   * the memory of in-flight requests. controller-runtime defaults to 1 worker per controller; 4 keeps
   * one slow key from stalling the others without flooding the server. @default 4
   */
  readonly concurrency?: number;
  /** Caches that must have synced before any worker starts. @default none */
  readonly informers?: readonly SyncSource[];
  /** Give up waiting for the caches after this long (controller-runtime's CacheSyncTimeout). @default 120_000 */
  readonly cacheSyncTimeoutMs?: number;
  /** How often cache sync is polled (client-go's WaitForCacheSync polls every 100 ms). @default 100 */
  readonly cacheSyncPollMs?: number;
  /** @default silentLogger */
  readonly logger?: Logger;
  /** @default no metrics */
  readonly metrics?: ControllerMetricsFactory;
  /** @default realClock */
  readonly clock?: Clock;
  /**
   * Longest wait a server's `Retry-After` imposes on a failed key (a 429 or 503 of a reconcile's write or
   * read): the retry waits at least what the server asked, at most this (a proxy asking for hours must not
   * park a key for hours), and never less than the rate limiter's backoff. @default 60_000
   */
  readonly maxRetryAfterMs?: number;
}

/** The caches did not sync in time; `pending` names them. */
export class CacheSyncTimeoutError extends Error {
  readonly pending: readonly string[];
  constructor(controller: string, timeoutMs: number, pending: readonly string[]) {
    super(`controller "${controller}": timed out after ${timeoutMs} ms waiting for caches to sync: ${pending.join(', ')}`);
    this.name = 'CacheSyncTimeoutError';
    this.pending = pending;
  }
}

/** The controller life cycle. `paused` is set before and during `syncing` too: the workers then do not start. */
type ControllerState =
  | { readonly kind: 'new'; readonly paused: boolean }
  | { readonly kind: 'syncing'; readonly paused: boolean }
  | { readonly kind: 'running'; readonly workers: Promise<void>; readonly pause: AbortController }
  | { readonly kind: 'paused' }
  | { readonly kind: 'stopped' };

/** Runs a reconciler over a work queue. */
export class Controller {
  readonly name: string;
  readonly queue: RateLimitingQueue<string>;
  readonly #reconciler: Reconciler;
  readonly #concurrency: number;
  readonly #informers: readonly SyncSource[];
  readonly #syncTimeoutMs: number;
  readonly #syncPollMs: number;
  readonly #logger: Logger;
  readonly #metrics: ControllerMetrics;
  readonly #clock: Clock;
  readonly #maxRetryAfterMs: number;
  readonly #hardStop = new AbortController();
  #state: ControllerState = { kind: 'new', paused: false };
  #active = 0;

  constructor(options: ControllerOptions) {
    if (!options.name) throw new TypeError('Controller: name must be a non-empty string');
    this.name = options.name;
    this.#reconciler = options.reconciler;
    this.#clock = options.clock ?? realClock;
    this.#concurrency = options.concurrency ?? 4;
    if (!Number.isInteger(this.#concurrency) || this.#concurrency < 1) {
      throw new RangeError(`Controller "${this.name}": concurrency must be a positive integer, got ${this.#concurrency}`);
    }
    this.#informers = options.informers ?? [];
    this.#syncTimeoutMs = options.cacheSyncTimeoutMs ?? 120_000;
    this.#syncPollMs = options.cacheSyncPollMs ?? 100;
    this.#maxRetryAfterMs = options.maxRetryAfterMs ?? 60_000;
    if (!(this.#maxRetryAfterMs >= 0)) throw new RangeError(`Controller "${this.name}": maxRetryAfterMs must be >= 0, got ${this.#maxRetryAfterMs}`);
    this.#logger = (options.logger ?? silentLogger).child({ controller: this.name });
    this.#metrics = (options.metrics ?? noopControllerMetrics).controller(this.name);
    this.queue = options.queue ?? createRateLimitingQueue<string>({
      name: this.name, clock: this.#clock, ...(options.workQueueMetrics ? { metrics: options.workQueueMetrics } : {}),
    });
  }

  /** Reconciles in flight right now. */
  get activeWorkers(): number {
    return this.#active;
  }

  /**
   * Waits for every informer to sync (throws {@link CacheSyncTimeoutError} naming the laggards), then
   * starts the workers. Resolves once the workers run; {@link stop} ends them.
   */
  async start(): Promise<void> {
    if (this.#state.kind !== 'new') throw new Error(`controller "${this.name}" was already started`);
    this.#state = { kind: 'syncing', paused: this.#state.paused };
    this.#metrics.setMaxConcurrentReconciles(this.#concurrency);
    this.#metrics.setActiveWorkers(0);
    this.#logger.info({ caches: this.#informers.map((i) => i.name) }, 'waiting for caches to sync');
    const deadline = this.#clock.now() + this.#syncTimeoutMs;
    for (;;) {
      const pending = this.#informers.filter((i) => !i.hasSynced()).map((i) => i.name);
      if (pending.length === 0) break;
      if (this.#state.kind !== 'syncing') return;
      if (this.#clock.now() >= deadline) {
        this.#state = { kind: 'stopped' };
        throw new CacheSyncTimeoutError(this.name, this.#syncTimeoutMs, pending);
      }
      await this.#clock.sleep(Math.min(this.#syncPollMs, deadline - this.#clock.now()));
    }
    const synced = this.#state;
    if (synced.kind !== 'syncing') return;
    if (synced.paused) {
      // Paused while the caches synced (the Lease was lost meanwhile): resume() starts the workers.
      this.#state = { kind: 'paused' };
      return;
    }
    this.#logger.info({ workers: this.#concurrency }, 'starting workers');
    this.#startWorkers();
  }

  #startWorkers(): void {
    const pause = new AbortController();
    const workers = Array.from({ length: this.#concurrency }, () => this.#worker(pause.signal));
    this.#state = { kind: 'running', workers: Promise.all(workers).then(() => undefined), pause };
  }

  /**
   * Stops taking keys and waits for the reconciles in flight; the queue keeps collecting keys from the
   * informers meanwhile (a replica that lost its Lease keeps its caches warm). {@link resume} starts
   * the workers again. Before {@link start} and while the caches still sync it only keeps the workers
   * from starting. Resolves at once unless running.
   */
  async pause(): Promise<void> {
    const state = this.#state;
    if (state.kind === 'new' || state.kind === 'syncing') {
      this.#state = { kind: state.kind, paused: true };
      return;
    }
    if (state.kind !== 'running') return;
    this.#state = { kind: 'paused' };
    state.pause.abort();
    await state.workers;
    this.#logger.info({}, 'workers paused');
  }

  /** Starts the workers again after {@link pause} (or lets {@link start} start them); a no-op in any other state. */
  resume(): void {
    const state = this.#state;
    if (state.kind === 'new' || state.kind === 'syncing') {
      this.#state = { kind: state.kind, paused: false };
      return;
    }
    if (state.kind !== 'paused') return;
    this.#logger.info({ workers: this.#concurrency }, 'resuming workers');
    this.#startWorkers();
  }

  /**
   * Stops intake and lets in-flight reconciles finish within `deadlineMs`; when the deadline passes,
   * their `ctx.signal` aborts. Resolves `true` if everything finished in time.
   */
  async stop(deadlineMs = 30_000): Promise<boolean> {
    const state = this.#state;
    this.#state = { kind: 'stopped' };
    const drained = this.queue.shutDownWithDrain();
    if (state.kind !== 'running') return true;
    const finished = Promise.all([drained, state.workers]).then(() => true);
    const timer = new AbortController();
    const timedOut = this.#clock.sleep(deadlineMs, timer.signal).then(() => false, () => true);
    const inTime = await Promise.race([finished, timedOut]);
    timer.abort();
    if (!inTime) {
      this.#logger.warn({ deadlineMs, active: this.#active }, 'shutdown deadline passed with reconciles in flight');
      this.#hardStop.abort(new Error(`controller "${this.name}" shutdown deadline of ${deadlineMs} ms passed`));
    }
    return inTime;
  }

  async #worker(paused: AbortSignal): Promise<void> {
    for (;;) {
      if (paused.aborted) return;
      const key = await this.queue.get(paused);
      if (key === undefined) return;
      await this.#process(key);
      // A backlog of reconciles without I/O would otherwise run to its end in one turn of the loop.
      await yieldIfHeld();
    }
  }

  async #process(key: string): Promise<void> {
    this.#metrics.setActiveWorkers(++this.#active);
    const { namespace, name } = splitObjectKey(key);
    // Both made when first used: most reconciles log nothing through them, a child logger serializes its
    // bindings, and a random UUID cost a fresh controller ~4 µs per reconcile.
    let id: string | undefined;
    const reconcileId = (): string => (id ??= randomUUID());
    let bound: Logger | undefined;
    const logger = (): Logger => (bound ??= this.#logger.child({ namespace, name, reconcileID: reconcileId() }));
    const started = this.#clock.now();
    let outcome: ReconcileOutcome = 'success';
    try {
      const result = await this.#reconciler.reconcile({ key, namespace, name, get reconcileId() { return reconcileId(); }, get logger() { return logger(); }, signal: this.#hardStop.signal });
      if (result?.requeueAfterMs !== undefined && result.requeueAfterMs > 0) {
        this.queue.forget(key);
        this.queue.addAfter(key, result.requeueAfterMs);
        outcome = 'requeue_after';
      } else if (result?.requeue) {
        this.queue.addRateLimited(key);
        outcome = 'requeue';
      } else {
        this.queue.forget(key);
      }
    } catch (err) {
      outcome = 'error';
      const terminal = isTerminalError(err);
      this.#metrics.reconcileError(terminal);
      if (terminal) {
        // Retrying cannot help; the next change of the object queues the key again.
        this.queue.forget(key);
        logger().error({ err }, 'reconciler error (terminal, not retried)');
      } else {
        // An overloaded server's Retry-After (429, 503) is honoured, as client-go's REST client does.
        const retryAfter = Math.min(retryAfterMs(err) ?? 0, this.#maxRetryAfterMs);
        this.queue.addRateLimited(key, retryAfter);
        logger().error({ err, requeues: this.queue.numRequeues(key), ...(retryAfter > 0 ? { retryAfterMs: retryAfter } : {}) }, 'reconciler error');
      }
    } finally {
      this.#metrics.reconciled(outcome, (this.#clock.now() - started) / 1000);
      this.queue.done(key);
      this.#metrics.setActiveWorkers(--this.#active);
    }
  }
}
