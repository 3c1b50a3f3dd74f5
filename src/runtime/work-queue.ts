/**
 * The basic work queue of client-go's `util/workqueue/queue.go`:
 *
 * - **Fair**: keys are handed out in the order they were added.
 * - **Stingy**: a key waiting in the queue is queued at most once, however often it is added; a key
 *   is never handed to two workers at once.
 * - **Re-entrant**: a key added while a worker processes it is marked dirty and queued again when the
 *   worker calls {@link WorkQueue.done}, so the change that arrived mid-reconcile is not lost.
 * - **Shutdown**: after {@link WorkQueue.shutDown} adds are ignored, keys already queued are still
 *   handed out, and {@link WorkQueue.get} resolves `undefined` once the queue is empty.
 */
import { realClock, type Clock, type TimerHandle } from './clock.ts';
import { Fifo } from './internal/fifo.ts';

/**
 * Creates the metrics of a named queue (client-go `MetricsProvider`); `name` is the queue's name,
 * used as the `name` label of the `workqueue_*` metrics.
 */
export interface WorkQueueMetricsProvider {
  /** `workqueue_depth`: keys waiting in the queue. */
  newDepthMetric(name: string): { inc(): void; dec(): void };
  /** `workqueue_adds_total`: adds that queued a key (deduplicated adds are not counted). */
  newAddsMetric(name: string): { inc(): void };
  /** `workqueue_queue_duration_seconds`: time a key waited between add and get. */
  newLatencyMetric(name: string): { observe(seconds: number): void };
  /** `workqueue_work_duration_seconds`: time between get and done. */
  newWorkDurationMetric(name: string): { observe(seconds: number): void };
  /** `workqueue_unfinished_work_seconds`: summed age of the work in progress. */
  newUnfinishedWorkSecondsMetric(name: string): { set(v: number): void };
  /** `workqueue_longest_running_processor_seconds`: age of the oldest work in progress. */
  newLongestRunningProcessorSecondsMetric(name: string): { set(v: number): void };
  /** `workqueue_retries_total`: delayed (rate-limited) adds. */
  newRetriesMetric(name: string): { inc(): void };
}

const noop = (): void => {};

/** A provider whose metrics record nothing: the default when no provider is given. */
export const noopWorkQueueMetricsProvider: WorkQueueMetricsProvider = {
  newDepthMetric: () => ({ inc: noop, dec: noop }),
  newAddsMetric: () => ({ inc: noop }),
  newLatencyMetric: () => ({ observe: noop }),
  newWorkDurationMetric: () => ({ observe: noop }),
  newUnfinishedWorkSecondsMetric: () => ({ set: noop }),
  newLongestRunningProcessorSecondsMetric: () => ({ set: noop }),
  newRetriesMetric: () => ({ inc: noop }),
};

/** A pending {@link WorkQueue.get}, answered once; an aborted one is no longer waiting. */
interface Waiter<K> {
  waiting(): boolean;
  answer(key: K | undefined): void;
}

/** Options of {@link WorkQueue}. */
export interface WorkQueueOptions {
  /**
   * The queue's name, the `name` label of its metrics.
   * @default ''
   */
  readonly name?: string;
  /**
   * Time source for metrics and timers.
   * @default realClock
   */
  readonly clock?: Clock;
  /**
   * Where the `workqueue_*` metrics go. Only when a provider is given does the queue run the periodic
   * update of the unfinished-work gauges (client-go's `updateUnfinishedWorkLoop`).
   * @default no metrics
   */
  readonly metrics?: WorkQueueMetricsProvider;
  /**
   * How often the unfinished-work and longest-running gauges are refreshed.
   * @default 500
   */
  readonly unfinishedWorkUpdatePeriodMs?: number;
}

/** The basic queue; see the module comment for its guarantees. */
export class WorkQueue<K = string> {
  protected readonly clock: Clock;
  protected readonly name: string;
  readonly #queue = new Fifo<K>();
  /** Keys that need processing: queued, or re-added while being processed. */
  readonly #dirty = new Set<K>();
  /** Keys handed to a worker and not yet done, with the time they were handed out. */
  readonly #processing = new Map<K, number>();
  /** When each dirty key was added, for the queue-latency metric. */
  readonly #addedAt = new Map<K, number>();
  readonly #waiters = new Fifo<Waiter<K>>();
  #shuttingDown = false;
  #drainWaiters: (() => void)[] = [];
  #metricsTimer: TimerHandle | undefined;
  readonly #metrics: {
    depth: { inc(): void; dec(): void };
    adds: { inc(): void };
    latency: { observe(seconds: number): void };
    workDuration: { observe(seconds: number): void };
    unfinished: { set(v: number): void };
    longest: { set(v: number): void };
  };
  protected readonly retriesMetric: { inc(): void };

  constructor(options: WorkQueueOptions = {}) {
    this.clock = options.clock ?? realClock;
    this.name = options.name ?? '';
    const provider = options.metrics ?? noopWorkQueueMetricsProvider;
    const period = options.unfinishedWorkUpdatePeriodMs ?? 500;
    if (!(period > 0)) throw new RangeError(`unfinishedWorkUpdatePeriodMs must be > 0, got ${period}`);
    this.#metrics = {
      depth: provider.newDepthMetric(this.name),
      adds: provider.newAddsMetric(this.name),
      latency: provider.newLatencyMetric(this.name),
      workDuration: provider.newWorkDurationMetric(this.name),
      unfinished: provider.newUnfinishedWorkSecondsMetric(this.name),
      longest: provider.newLongestRunningProcessorSecondsMetric(this.name),
    };
    this.retriesMetric = provider.newRetriesMetric(this.name);
    if (options.metrics) this.#scheduleUnfinishedWorkUpdate(period);
  }

  /** Marks `key` as needing processing. Ignored after shutdown. */
  add(key: K): void {
    if (this.#shuttingDown || this.#dirty.has(key)) return;
    // As client-go's metrics.add: a dirty key being processed already counts as queued and waiting.
    this.#metrics.adds.inc();
    this.#metrics.depth.inc();
    this.#addedAt.set(key, this.clock.now());
    this.#dirty.add(key);
    // Being processed: done() queues it again, so no worker gets it while one still holds it.
    if (this.#processing.has(key)) return;
    this.#enqueue(key);
  }

  /** Keys waiting to be handed out (not counting those being processed). */
  len(): number {
    return this.#queue.length;
  }

  /**
   * Resolves with the next key, which the caller then owns until it calls {@link done}; waits while
   * the queue is empty. Resolves `undefined` once the queue is shut down and empty, or when `signal`
   * aborts while waiting (a paused worker).
   */
  get(signal?: AbortSignal): Promise<K | undefined> {
    if (this.#queue.length > 0) return Promise.resolve(this.#take());
    if (this.#shuttingDown || signal?.aborted) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      let waiting = true;
      // The listener goes with the answer: a worker's pause signal lives as long as its leadership and
      // would otherwise collect one listener per key it waited for.
      const onAbort = (): void => void waiter.answer(undefined);
      const waiter: Waiter<K> = {
        waiting: () => waiting,
        answer: (key) => {
          if (!waiting) return;
          waiting = false;
          signal?.removeEventListener('abort', onAbort);
          resolve(key);
        },
      };
      // An aborted waiter is skipped when its turn comes: it must not take a key nobody processes.
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#waiters.push(waiter);
    });
  }

  /** Marks `key` as processed; if it was added again meanwhile, it is queued again now. */
  done(key: K): void {
    const startedAt = this.#processing.get(key);
    if (startedAt === undefined) return;
    this.#processing.delete(key);
    this.#metrics.workDuration.observe((this.clock.now() - startedAt) / 1000);
    if (this.#dirty.has(key)) this.#enqueue(key);
    if (this.#processing.size === 0 && this.#drainWaiters.length > 0) {
      const waiters = this.#drainWaiters;
      this.#drainWaiters = [];
      for (const resolve of waiters) resolve();
    }
  }

  /** Stops intake at once: adds are ignored and idle {@link get} calls resolve `undefined`. */
  shutDown(): void {
    if (this.#shuttingDown) return;
    this.#shuttingDown = true;
    if (this.#metricsTimer) this.clock.clearTimeout(this.#metricsTimer);
    this.#metricsTimer = undefined;
    // Waiters only exist while the queue is empty, so each of them is told to stop.
    for (let waiter = this.#waiters.shift(); waiter; waiter = this.#waiters.shift()) waiter.answer(undefined);
  }

  /**
   * Shuts down, then resolves once no key is being processed (client-go `ShutDownWithDrain`).
   * Keys still queued stay available to {@link get} until the workers stop asking.
   */
  shutDownWithDrain(): Promise<void> {
    this.shutDown();
    if (this.#processing.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.#drainWaiters.push(resolve));
  }

  shuttingDown(): boolean {
    return this.#shuttingDown;
  }

  #enqueue(key: K): void {
    this.#queue.push(key);
    for (let waiter = this.#waiters.shift(); waiter; waiter = this.#waiters.shift()) {
      if (!waiter.waiting()) continue;
      waiter.answer(this.#take());
      return;
    }
  }

  #take(): K {
    const key = this.#queue.shift() as K;
    this.#metrics.depth.dec();
    const now = this.clock.now();
    const addedAt = this.#addedAt.get(key);
    if (addedAt !== undefined) {
      this.#metrics.latency.observe((now - addedAt) / 1000);
      this.#addedAt.delete(key);
    }
    this.#processing.set(key, now);
    this.#dirty.delete(key);
    return key;
  }

  #scheduleUnfinishedWorkUpdate(periodMs: number): void {
    this.#metricsTimer = this.clock.setTimeout(() => {
      this.#updateUnfinishedWork();
      if (!this.#shuttingDown) this.#scheduleUnfinishedWorkUpdate(periodMs);
    }, periodMs);
  }

  #updateUnfinishedWork(): void {
    const now = this.clock.now();
    let total = 0;
    let oldest = 0;
    for (const startedAt of this.#processing.values()) {
      const age = now - startedAt;
      total += age;
      oldest = Math.max(oldest, age);
    }
    this.#metrics.unfinished.set(total / 1000);
    this.#metrics.longest.set(oldest / 1000);
  }
}
