/**
 * The reflector (client-go `tools/cache/reflector.go`, kube-rs `watcher`): keeps a sink in step with
 * the API server by a paginated LIST followed by a WATCH from the list's resourceVersion, forever.
 *
 * - Any error or a stream that ends badly → reconnect after a jittered exponential backoff
 *   ({@link WatchBackoff}); it never gives up, because a controller whose cache silently stopped is
 *   worse than one that crashes (client-node's `makeInformer` stops for good: #364, #596, #958).
 * - `410 Gone/Expired` (HTTP or an `ERROR` event) → the resourceVersion was compacted away; relist
 *   at once and let the sink emit the differences, so deletes missed meanwhile are still observed.
 * - Streams rotate normally through the server's `timeoutSeconds` (random 5–10 min as in client-go,
 *   so a fleet does not reconnect in lockstep); a healthy stream is never aborted on a fixed timer
 *   (client-node 2.0 does every 30 s, #3020). Only *inactivity* (no event nor bookmark for
 *   `inactivityTimeoutMs`) restarts a watch: a real API server sends a bookmark about every minute.
 */
import { ApiStatusError, isExpired } from '../kube/api-status-error.ts';
import type { KubeObject, WatchEvent } from '../kube/object.ts';
import { realClock, type Clock } from './clock.ts';
import { silentLogger, type Logger } from './logger.ts';
import { listAllPages, type ListWatchSource, type PageGrowth } from './list-watch-source.ts';
import { WatchBackoff, type WatchBackoffOptions } from './watch-backoff.ts';

/** Receives what the reflector observes. Calls are synchronous and in order. */
export interface ReflectorSink<T extends KubeObject> {
  /** A complete, consistent list: the sink replaces its contents (emitting the differences). */
  replace(items: T[], resourceVersion: string): void;
  added(obj: T): void;
  modified(obj: T): void;
  deleted(obj: T): void;
}

/** What the reflector is doing (a union, not flags). */
export type ReflectorPhase =
  | { readonly phase: 'idle' }
  | { readonly phase: 'listing' }
  | { readonly phase: 'watching' }
  | { readonly phase: 'backoff'; readonly untilMs: number; readonly error: Error }
  | { readonly phase: 'stopped' };

const WATCHING: ReflectorPhase = { phase: 'watching' };

/** Liveness facts for `/healthz`. */
export interface ReflectorHealth {
  readonly name: string;
  readonly phase: ReflectorPhase['phase'];
  readonly synced: boolean;
  /** When the last LIST completed. */
  readonly lastListAt: number | undefined;
  /** When the last watch event (bookmarks included) arrived or a stream ended cleanly. */
  readonly lastWatchEventAt: number | undefined;
  /** When the reflector last proved the connection works (list done, event, clean stream end). */
  readonly lastHealthyAt: number | undefined;
  /** Failures since the last healthy moment. */
  readonly consecutiveFailures: number;
  readonly lastError: string | undefined;
}

/** Removes `metadata.managedFields`: large, and never read by a controller. */
export function stripManagedFields<T extends KubeObject>(obj: T): T {
  if (obj.metadata?.managedFields === undefined) return obj;
  // A rebuilt object instead of `delete`: deleting a property that is not the last one added turns
  // a V8 object into a slower, larger dictionary-mode object, and custom resources list their
  // metadata keys alphabetically, so managedFields sits in the middle.
  const { managedFields: _dropped, ...metadata } = obj.metadata;
  obj.metadata = metadata;
  return obj;
}

/** Options for {@link Reflector}. */
export interface ReflectorOptions<T extends KubeObject> {
  /** Name in logs and health output, e.g. `cronjobs.batch`. */
  readonly name: string;
  /** Where LIST and WATCH go (a `ResourceClient` fits). */
  readonly source: ListWatchSource<T>;
  /** Receives the objects. */
  readonly sink: ReflectorSink<T>;
  /** Restrict to one namespace. @default all namespaces */
  readonly namespace?: string;
  /** @default none */
  readonly labelSelector?: string;
  /** @default none */
  readonly fieldSelector?: string;
  /** Applied to every object before the sink sees it; may mutate and return its input. @default {@link stripManagedFields} */
  readonly transform?: (obj: T) => T;
  /** LIST page size. @default 500 (client-go's pager default) */
  readonly pageSize?: number;
  /** How far pages may grow beyond `pageSize` while their answers stay small. @default none */
  readonly pageGrowth?: PageGrowth;
  /** Smallest server-side watch timeout; each watch picks uniformly in [min, 2·min). @default 300 */
  readonly minWatchTimeoutSeconds?: number;
  /** Restart a watch that delivered nothing (no event, no bookmark) for this long. @default 300_000 */
  readonly inactivityTimeoutMs?: number;
  /** Reconnect backoff. @default {@link WatchBackoff} defaults (0.8 s → 30 s, jitter, reset after 2 min) */
  readonly backoff?: WatchBackoffOptions;
  /** A stream that ends cleanly sooner than this without any event counts as a failure (no hot loop). @default 1_000 */
  readonly minHealthyStreamMs?: number;
  /** @default realClock */
  readonly clock?: Clock;
  /** @default silentLogger */
  readonly logger?: Logger;
  /** Random source in [0, 1). @default Math.random */
  readonly random?: () => number;
}

/** A watch that delivered nothing for too long. */
export class WatchInactiveError extends Error {
  constructor(ms: number) {
    super(`watch delivered no event or bookmark for ${ms} ms; restarting it`);
    this.name = 'WatchInactiveError';
  }
}

/** Runs LIST + WATCH for one resource until stopped. */
export class Reflector<T extends KubeObject> {
  readonly name: string;
  readonly #o: Required<Omit<ReflectorOptions<T>, 'namespace' | 'labelSelector' | 'fieldSelector' | 'backoff' | 'pageGrowth'>> &
    Pick<ReflectorOptions<T>, 'namespace' | 'labelSelector' | 'fieldSelector' | 'pageGrowth'>;
  readonly #backoff: WatchBackoff;
  #phase: ReflectorPhase = { phase: 'idle' };
  #synced = false;
  #lastListAt: number | undefined;
  #lastEventAt: number | undefined;
  #lastHealthyAt: number | undefined;
  #failures = 0;
  #lastError: string | undefined;
  #abort: AbortController | undefined;
  #running: Promise<void> | undefined;
  /** Where the next WATCH resumes; undefined = a LIST is needed. Advanced by every event. */
  #resourceVersion: string | undefined;

  constructor(options: ReflectorOptions<T>) {
    this.name = options.name;
    const clock = options.clock ?? realClock;
    this.#o = {
      ...options,
      transform: options.transform ?? stripManagedFields,
      pageSize: options.pageSize ?? 500,
      minWatchTimeoutSeconds: options.minWatchTimeoutSeconds ?? 300,
      inactivityTimeoutMs: options.inactivityTimeoutMs ?? 300_000,
      minHealthyStreamMs: options.minHealthyStreamMs ?? 1_000,
      clock,
      logger: (options.logger ?? silentLogger).child({ reflector: options.name }),
      random: options.random ?? Math.random,
    };
    if (!(this.#o.pageSize > 0)) throw new RangeError(`pageSize must be > 0, got ${this.#o.pageSize}`);
    if (!(this.#o.inactivityTimeoutMs > 0)) throw new RangeError(`inactivityTimeoutMs must be > 0, got ${this.#o.inactivityTimeoutMs}`);
    this.#backoff = new WatchBackoff(clock, { random: this.#o.random, ...options.backoff });
  }

  /** Current phase. */
  get phase(): ReflectorPhase {
    return this.#phase;
  }

  /** Where the next WATCH resumes (the last resourceVersion seen); undefined before the first LIST or after 410. */
  get resourceVersion(): string | undefined {
    return this.#resourceVersion;
  }

  /** True once the first LIST has been delivered to the sink. */
  hasSynced(): boolean {
    return this.#synced;
  }

  health(): ReflectorHealth {
    return {
      name: this.name, phase: this.#phase.phase, synced: this.#synced, lastListAt: this.#lastListAt,
      lastWatchEventAt: this.#lastEventAt, lastHealthyAt: this.#lastHealthyAt,
      consecutiveFailures: this.#failures, lastError: this.#lastError,
    };
  }

  /** Starts the LIST/WATCH loop (idempotent). */
  start(): void {
    if (this.#running) return;
    this.#abort = new AbortController();
    this.#running = this.#run(this.#abort.signal);
  }

  /** Stops the loop and closes the current watch. */
  async stop(): Promise<void> {
    this.#abort?.abort(new Error(`reflector ${this.name} stopped`));
    await this.#running;
  }

  async #run(signal: AbortSignal): Promise<void> {
    const { clock, logger } = this.#o;
    let expiredStreak = 0;
    while (!signal.aborted) {
      try {
        this.#resourceVersion ??= await this.#list(signal);
        await this.#watch(this.#resourceVersion, signal);
        expiredStreak = 0;
      } catch (err) {
        if (signal.aborted) break;
        const error = err instanceof Error ? err : new Error(String(err));
        this.#failures++;
        this.#lastError = error.message;
        if (isExpired(error)) {
          // Only a fresh LIST cures 410; the first one is immediate (client-go relists at once),
          // repeated ones back off like any failure.
          this.#resourceVersion = undefined;
          if (expiredStreak++ === 0) {
            logger.info({ err: error.message }, 'resourceVersion expired; relisting');
            continue;
          }
        }
        const retryAfterMs = error instanceof ApiStatusError && error.retryAfterSeconds !== undefined ? error.retryAfterSeconds * 1000 : 0;
        const delay = Math.max(retryAfterMs, this.#backoff.next());
        logger.warn({ err: error.message, delayMs: Math.round(delay), failures: this.#failures }, 'list/watch failed; retrying');
        this.#phase = { phase: 'backoff', untilMs: clock.now() + delay, error };
        await clock.sleep(delay, signal).catch(() => undefined);
      }
    }
    this.#phase = { phase: 'stopped' };
  }

  #healthy(): void {
    const now = this.#o.clock.now();
    this.#lastHealthyAt = now;
    this.#failures = 0;
  }

  async #list(signal: AbortSignal): Promise<string> {
    this.#phase = { phase: 'listing' };
    const { source, transform, sink } = this.#o;
    const { items, resourceVersion } = await listAllPages(source, {
      pageSize: this.#o.pageSize, transform, signal,
      ...(this.#o.pageGrowth ? { growth: this.#o.pageGrowth } : {}),
      // A failed page is asked again (3 times, after 0.2, 0.4, 0.8 s or the server's Retry-After) before
      // the whole LIST fails and backs off: many small pages would otherwise rarely all succeed.
      retryPage: { attempts: 3, wait: (attempt, retryAfterMs, pageSignal) => this.#o.clock.sleep(retryAfterMs ?? 100 * 2 ** attempt, pageSignal) },
      ...(this.#o.namespace !== undefined ? { namespace: this.#o.namespace } : {}),
      ...(this.#o.labelSelector !== undefined ? { labelSelector: this.#o.labelSelector } : {}),
      ...(this.#o.fieldSelector !== undefined ? { fieldSelector: this.#o.fieldSelector } : {}),
    });
    sink.replace(items, resourceVersion);
    this.#lastListAt = this.#o.clock.now();
    this.#synced = true;
    this.#healthy();
    this.#o.logger.debug({ count: items.length, resourceVersion }, 'listed');
    return resourceVersion;
  }

  /** Runs one watch until the stream ends; every event advances `#resourceVersion`. */
  async #watch(startRv: string, signal: AbortSignal): Promise<void> {
    const { clock, source, sink, transform, inactivityTimeoutMs } = this.#o;
    this.#phase = WATCHING;
    const local = new AbortController();
    const onStop = (): void => local.abort(signal.reason);
    signal.addEventListener('abort', onStop, { once: true });
    let events = 0;
    const started = clock.now();
    let lastActivity = started;
    let inactive: WatchInactiveError | undefined;
    const arm = (ms: number): ReturnType<Clock['setTimeout']> => clock.setTimeout(() => {
      const idle = clock.now() - lastActivity;
      if (idle >= inactivityTimeoutMs) {
        inactive = new WatchInactiveError(inactivityTimeoutMs);
        local.abort(inactive);
      } else {
        timer = arm(inactivityTimeoutMs - idle);
      }
    }, ms);
    let timer = arm(inactivityTimeoutMs);
    // Abort must win even against a source that ignores its signal. (Not `Promise.race` with one
    // long-lived promise: every race leaves a reaction on it, a leak of one closure per event.)
    let interrupt: ((r: IteratorResult<WatchEvent<T>>) => void) | undefined;
    local.signal.addEventListener('abort', () => interrupt?.({ done: true, value: undefined }), { once: true });
    const nextOrAbort = (): Promise<IteratorResult<WatchEvent<T>>> | IteratorResult<WatchEvent<T>> => {
      if (local.signal.aborted) return { done: true, value: undefined };
      return new Promise((resolve, reject) => {
        interrupt = resolve;
        iterator.next().then(resolve, reject);
      });
    };
    const minTimeout = this.#o.minWatchTimeoutSeconds;
    const iterator = source.watch({
      resourceVersion: startRv,
      allowWatchBookmarks: true,
      timeoutSeconds: Math.floor(minTimeout * (1 + this.#o.random())),
      signal: local.signal,
      ...(this.#o.namespace !== undefined ? { namespace: this.#o.namespace } : {}),
      ...(this.#o.labelSelector !== undefined ? { labelSelector: this.#o.labelSelector } : {}),
      ...(this.#o.fieldSelector !== undefined ? { fieldSelector: this.#o.fieldSelector } : {}),
    })[Symbol.asyncIterator]();
    try {
      for (;;) {
        const next = await nextOrAbort();
        if (next.done) break;
        const event = next.value;
        lastActivity = clock.now();
        events++;
        if (event.type === 'ERROR') throw new ApiStatusError(event.object);
        const obj = event.object;
        const objRv = obj.metadata?.resourceVersion;
        if (objRv) this.#resourceVersion = objRv;
        this.#lastEventAt = lastActivity;
        if (this.#failures !== 0) this.#healthy();
        else this.#lastHealthyAt = lastActivity;
        switch (event.type) {
          case 'ADDED':
            sink.added(transform(obj));
            break;
          case 'MODIFIED':
            sink.modified(transform(obj));
            break;
          case 'DELETED':
            sink.deleted(transform(obj));
            break;
          case 'BOOKMARK':
            break;
        }
      }
    } finally {
      clock.clearTimeout(timer);
      signal.removeEventListener('abort', onStop);
      local.abort(new Error('watch finished'));
      void iterator.return?.(undefined)?.catch(() => undefined);
    }
    if (inactive) throw inactive;
    if (signal.aborted) return;
    if (events === 0 && clock.now() - started < this.#o.minHealthyStreamMs) {
      throw new Error(`watch stream closed after ${clock.now() - started} ms without any event`);
    }
    this.#lastEventAt = clock.now();
    this.#healthy();
  }
}
